import { createHash, randomBytes } from "node:crypto";
import { PERMISSION_CATEGORIES } from "../../sdk/schemas";
import { Persistent } from "./persistence";
import { badRequest, forbidden, unauthorized } from "./errors";
import type { ApiKeyRecord, Permissions, UserRecord } from "./records";

/**
 * Permission categories of scoped keys. The spec names the first four; `billing` is the category those four
 * lack; `user_write` and `instance_key` cover key management and 2FA; `team_read` and `team_write` a team's roles
 * and members (the vendor's names). The endpoint-to-category table is in
 * emulator/PERMISSIONS.md.
 */
export const PERMISSIONS = PERMISSION_CATEGORIES;
export type Permission = (typeof PERMISSIONS)[number];

/** A key just issued: its record, and its value (shown this once). */
export type IssuedKey = ApiKeyRecord & { key: string };

/** Who is calling: the user and the key they called with. */
export interface Principal {
  user: UserRecord;
  key: ApiKeyRecord;
  /** The key value the caller presented. */
  apiKey: string;
}

export const hashKey = (key: string) => createHash("sha256").update(key).digest("hex");

/** Users and their API keys. */
export class Accounts implements Persistent<AccountsSnapshot> {
  private readonly users = new Map<number, UserRecord>();
  /** By key hash. */
  private readonly keys = new Map<string, ApiKeyRecord>();
  private nextUserId = 1;
  private nextKeyId = 1;

  constructor(private readonly now: () => number) {}

  addUser(fields: Partial<UserRecord> & { email: string }): UserRecord {
    const id = this.nextUserId++;
    const user: UserRecord = {
      id,
      username: fields.email.split("@")[0],
      fullName: "",
      sshKey: "",
      credit: 100,
      emailVerified: true,
      tfaStatus: "disabled",
      createdAt: this.now(),
      ...fields,
    };
    this.users.set(id, user);
    return user;
  }

  user(id: number): UserRecord | undefined {
    return this.users.get(id);
  }

  /** Every user, in the order they were opened (the console's list of accounts). */
  allUsers(): UserRecord[] {
    return [...this.users.values()];
  }

  /** Issues a key; `value` fixes its text (for a seeded key that scripts know in advance). */
  issueKey(
    userId: number,
    options: {
      name?: string; permissions?: Permissions; instanceId?: number; value?: string; expiresAt?: number; session?: boolean; sourceKeyId?: number; tfaMethodId?: number;
      teamRole?: string; memberId?: number;
    } = {},
  ): IssuedKey {
    // From the system's generator, never the seeded one: a key must not be predictable from the seed.
    const key = options.value ?? randomBytes(32).toString("hex");
    const keyHash = hashKey(key);
    if (this.keys.has(keyHash)) throw new Error("API key collision");
    this.dropExpiredSessions();
    const record: ApiKeyRecord = {
      id: this.nextKeyId++,
      keyHash,
      prefix: key.slice(0, 6),
      userId,
      name: options.name ?? "",
      permissions: options.permissions ?? null,
      instanceId: options.instanceId,
      createdAt: this.now(),
      expiresAt: options.expiresAt,
      session: options.session,
      sourceKeyId: options.sourceKeyId,
      tfaMethodId: options.tfaMethodId,
      chosen: options.value !== undefined || undefined,
      teamRole: options.teamRole,
      memberId: options.memberId,
    };
    this.keys.set(keyHash, record);
    return { ...record, key };
  }

  /**
   * A key created by a user through the API. A scoped key cannot create a key with more rights than its own,
   * and only known categories are accepted.
   */
  createKey(creator: Principal, name: string, permissions: Permissions): IssuedKey {
    const unknown = Object.keys(permissions?.api ?? {}).filter((c) => !(PERMISSIONS as readonly string[]).includes(c));
    // The code the vendor's description names for a bad permission set (docs/service-facts.md#records-as-the-vendor-describes-them).
    if (unknown.length) {
      throw badRequest("invalid_permissions", `Unknown permission categories: ${unknown.join(", ")}. Known: ${PERMISSIONS.join(", ")}.`);
    }
    const own = creator.key.permissions;
    const wider = own === null ? [] : permissions === null ? ["full access"] : Object.keys(permissions.api).filter((c) => !(c in own.api));
    if (wider.length) throw forbidden("permission_escalation", `This key cannot grant what it lacks: ${wider.join(", ")}.`);
    return this.issueKey(creator.user.id, { name, permissions });
  }

  knows(key: string): boolean {
    return this.keys.has(hashKey(key));
  }

  /** The user's keys, newest last; revoked ones, instance keys and sessions left out. */
  keysOf(userId: number): ApiKeyRecord[] {
    return [...this.keys.values()].filter((k) => k.userId === userId && k.revokedAt === undefined && k.instanceId === undefined && !k.session);
  }

  keyById(userId: number, id: number): ApiKeyRecord | undefined {
    return this.keysOf(userId).find((k) => k.id === id);
  }

  /**
   * Revokes a key and every session opened with it (and sessions opened with those). A revoked key is
   * forgotten (its id is never given again), unless its text was chosen: that one is kept, revoked, so that
   * starting again with the same `--api-key` does not bring it back.
   */
  revokeKey(record: ApiKeyRecord): void {
    if (record.chosen) record.revokedAt = this.now();
    else this.keys.delete(record.keyHash);
    this.endSessions((session) => session.sourceKeyId === record.id);
  }

  revokeKeyById(id: number): void {
    for (const record of this.keys.values()) if (record.id === id) this.revokeKey(record);
  }

  /** Ends the sessions that match (a 2FA change: see emulator/TFA.md). */
  endSessions(which: (session: ApiKeyRecord) => boolean): void {
    for (const record of [...this.keys.values()]) if (record.session && this.keys.has(record.keyHash) && which(record)) this.revokeKey(record);
  }

  /** Sessions past their end are refused anyway: forgotten when the next key is issued, so they do not pile up. */
  private dropExpiredSessions(): void {
    const now = this.now();
    for (const record of this.keys.values()) if (record.session && record.expiresAt !== undefined && record.expiresAt <= now) this.keys.delete(record.keyHash);
  }

  /**
   * Whether the caller's key may use an endpoint of `permission`: full-access keys may use all; scoped keys
   * the categories of their permission set; an instance API key only the routes that allow it.
   */
  authorize(principal: Principal, permission: Permission, instanceKeyAllowed: boolean): void {
    const { key } = principal;
    if (key.instanceId !== undefined) {
      if (instanceKeyAllowed) return;
      throw forbidden("permission_denied", "An instance API key may only start, stop or destroy its own instance.");
    }
    // A member's key: its role's permissions now (none once the role is gone).
    const permissions = key.teamRole === undefined ? key.permissions : (principal.user.team?.roles.find((r) => r.name === key.teamRole)?.permissions ?? { api: {} });
    if (permissions === null || permission in permissions.api) return;
    throw forbidden("permission_denied", `This API key lacks the ${permission} permission.`);
  }

  /** The caller of a request; 401 for a missing, unknown or revoked key. */
  authenticate(key: string | undefined): Principal {
    if (!key) throw unauthorized("auth_error", "Missing API key: send Authorization: Bearer <key>.");
    const record = this.keys.get(hashKey(key));
    if (!record || record.revokedAt !== undefined) {
      throw unauthorized("auth_error", "Invalid API key: it is unknown or was revoked.");
    }
    if (record.expiresAt !== undefined && record.expiresAt <= this.now()) throw unauthorized("auth_error", "The session expired: log in again.");
    const user = this.users.get(record.userId);
    if (!user) throw unauthorized("auth_error", "Invalid API key: its user no longer exists.");
    return { user, key: record, apiKey: key };
  }

  snapshot(): AccountsSnapshot {
    return { users: [...this.users.values()], keys: [...this.keys.values()], nextUserId: this.nextUserId, nextKeyId: this.nextKeyId };
  }

  restore(data: AccountsSnapshot): void {
    this.users.clear();
    this.keys.clear();
    for (const user of data.users) this.users.set(user.id, user);
    for (const key of data.keys) this.keys.set(key.keyHash, key);
    this.nextUserId = data.nextUserId;
    this.nextKeyId = data.nextKeyId;
  }
}

export interface AccountsSnapshot {
  users: UserRecord[];
  keys: ApiKeyRecord[];
  nextUserId: number;
  nextKeyId: number;
}
