import type { ApiKeyRecord, AuditEntry, UserRecord } from "./records";

/** Addresses and actions kept per account: the oldest go first. */
const MAX_ADDRESSES = 100;
const MAX_ENTRIES = 1000;

/**
 * What an account's history shows (docs/service-facts.md#account-history): the addresses its keys were used from
 * (`show ipaddrs`), kept with the account, and its important actions (AuditLog).
 */
export const audit = {
  /** A call from `ip` with one of the account's keys, at `now` (epoch ms). */
  seen(user: UserRecord, ip: string, now: number): void {
    const addresses = (user.ipAddresses ??= []);
    const known = addresses.find((a) => a.ip === ip);
    if (known) {
      known.lastSeen = now;
      return;
    }
    addresses.push({ ip, firstSeen: now, lastSeen: now });
    if (addresses.length > MAX_ADDRESSES) addresses.splice(0, addresses.length - MAX_ADDRESSES);
  },
};

/**
 * The accounts' important actions (`show audit-logs`): every change made through the API, with the key, the address
 * and the endpoint, and the names of what was sent, never the values. Kept in memory, the last MAX_ENTRIES of each
 * account, not saved: a history, not state (a saved one would grow with every call).
 */
export class AuditLog {
  private readonly entries = new Map<number, AuditEntry[]>();
  private nextId = 1;

  /** A change made: `route` as declared (`PUT /api/v0/instances/:id/`), its path parameters and body. */
  record(user: UserRecord, key: ApiKeyRecord, call: { ip: string; now: number; route: string; params: Record<string, string>; body: unknown }): void {
    const entries = this.entries.get(user.id) ?? [];
    const fields = call.body && typeof call.body === "object" && !Array.isArray(call.body) ? Object.keys(call.body).sort() : [];
    const args = JSON.stringify({ ...call.params, ...(fields.length && { fields }) });
    entries.push({ id: this.nextId++, ip: call.ip, apiKeyId: key.id, at: call.now, route: call.route.replace(/:(\w+)/g, "{$1}"), args });
    if (entries.length > MAX_ENTRIES) entries.splice(0, entries.length - MAX_ENTRIES);
    this.entries.set(user.id, entries);
  }

  /** The account's actions, oldest first. */
  of(userId: number): readonly AuditEntry[] {
    return this.entries.get(userId) ?? [];
  }
}
