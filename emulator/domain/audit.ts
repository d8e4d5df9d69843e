import type { ApiKeyRecord, UserRecord } from "./records";

/** Addresses and actions kept per account: the oldest go first. */
const MAX_ADDRESSES = 100;
const MAX_ENTRIES = 1000;

/**
 * What an account's history shows (docs/service-facts.md#account-history): the addresses its keys were used from
 * (`show ipaddrs`), and its important actions, every change made through the API (`show audit-logs`), with the
 * key, the address and the endpoint, and the names of what was sent, never the values.
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

  /** A change made: `route` as declared (`PUT /api/v0/instances/:id/`), its path parameters and body. */
  record(user: UserRecord, key: ApiKeyRecord, call: { ip: string; now: number; route: string; params: Record<string, string>; body: unknown }): void {
    const entries = (user.auditLog ??= []);
    const fields = call.body && typeof call.body === "object" && !Array.isArray(call.body) ? Object.keys(call.body).sort() : [];
    const args = JSON.stringify({ ...call.params, ...(fields.length && { fields }) });
    const id = (entries.at(-1)?.id ?? 0) + 1;
    entries.push({ id, ip: call.ip, apiKeyId: key.id, at: call.now, route: call.route.replace(/:(\w+)/g, "{$1}"), args });
    if (entries.length > MAX_ENTRIES) entries.splice(0, entries.length - MAX_ENTRIES);
  },

  /** `GET /api/v0/audit_logs/`: a bare list, newest first, as the public client reads it. */
  view(user: UserRecord) {
    return [...(user.auditLog ?? [])].reverse().map((e) => ({
      id: e.id,
      user_id: user.id,
      ip_address: e.ip,
      api_key_id: e.apiKeyId,
      created_at: e.at / 1000,
      api_route: e.route,
      args: e.args,
    }));
  },

  /** `GET /api/v0/users/{id}/ipaddrs/`: the description's fields, and those the public client shows. */
  addresses(user: UserRecord) {
    return (user.ipAddresses ?? []).map((a, i) => ({
      id: i + 1,
      user_id: user.id,
      ip_address: a.ip,
      ip: a.ip,
      timestamp: new Date(a.lastSeen).toISOString(),
      first_seen: a.firstSeen / 1000,
      last_seen: a.lastSeen / 1000,
      first_location: "",
    }));
  },
};
