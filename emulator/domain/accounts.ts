import { Random } from "./random";
import { forbidden, unauthorized } from "./errors";

/**
 * Permission categories of scoped keys. The spec names the first four; `billing` is the category those four
 * lack; `user_write` and `instance_key` cover key management and 2FA. The endpoint-to-category table is in
 * emulator/PERMISSIONS.md.
 */
export const PERMISSIONS = ["misc", "user_read", "user_write", "instance_read", "instance_write", "billing"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface UserRecord {
  id: number;
  email: string;
  username: string;
  fullName: string;
  sshKey: string;
  credit: number;
  emailVerified: boolean;
  tfaStatus: "enabled" | "disabled" | "legacy";
}

/** `null` permissions: a full-access key, as the console creates by default. */
export type Permissions = { api: Record<string, Record<string, unknown>> } | null;

export interface ApiKeyRecord {
  id: number;
  key: string;
  userId: number;
  name: string;
  permissions: Permissions;
  /** Set for an instance API key: it may only start, stop or destroy this instance. */
  instanceId?: number;
  createdAt: number;
  revokedAt?: number;
}

/** Who is calling: the user and the key they called with. */
export interface Principal {
  user: UserRecord;
  key: ApiKeyRecord;
}

/** Users and their API keys. */
export class Accounts {
  private readonly users = new Map<number, UserRecord>();
  private readonly keys = new Map<string, ApiKeyRecord>();
  private nextUserId = 1;
  private nextKeyId = 1;

  constructor(
    private readonly random: Random,
    private readonly now: () => number,
  ) {}

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
      ...fields,
    };
    this.users.set(id, user);
    return user;
  }

  user(id: number): UserRecord | undefined {
    return this.users.get(id);
  }

  /** Issues a key; `value` fixes its text (for a seeded key that scripts know in advance). */
  issueKey(userId: number, options: { name?: string; permissions?: Permissions; instanceId?: number; value?: string } = {}): ApiKeyRecord {
    const key = options.value ?? this.random.hex(64);
    if (this.keys.has(key)) throw new Error("API key collision");
    const record: ApiKeyRecord = {
      id: this.nextKeyId++,
      key,
      userId,
      name: options.name ?? "",
      permissions: options.permissions ?? null,
      instanceId: options.instanceId,
      createdAt: this.now(),
    };
    this.keys.set(key, record);
    return record;
  }

  revokeKey(record: ApiKeyRecord): void {
    record.revokedAt = this.now();
  }

  revokeKeyById(id: number): void {
    for (const record of this.keys.values()) if (record.id === id) this.revokeKey(record);
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
    if (key.permissions === null || permission in key.permissions.api) return;
    throw forbidden("permission_denied", `This API key lacks the ${permission} permission.`);
  }

  /** The caller of a request; 401 for a missing, unknown or revoked key. */
  authenticate(key: string | undefined): Principal {
    if (!key) throw unauthorized("auth_error", "Missing API key: send Authorization: Bearer <key>.");
    const record = this.keys.get(key);
    if (!record || record.revokedAt !== undefined) {
      throw unauthorized("auth_error", "Invalid API key: it is unknown or was revoked.");
    }
    const user = this.users.get(record.userId);
    if (!user) throw unauthorized("auth_error", "Invalid API key: its user no longer exists.");
    return { user, key: record };
  }
}
