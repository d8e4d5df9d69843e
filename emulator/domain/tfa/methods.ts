import type { UserRecord } from "../records";
import { Clock } from "../clock";
import { ServiceError, badRequest, notFound } from "../errors";
import { MethodType } from "./channels";
import { LOCKOUT_MS, MAX_FAILED_ATTEMPTS, SECOND } from "./constants";
import type { Failed } from "./failures";

/*
 * Method records (a user's SMS numbers and authenticator app), how a request names one, and the per-method
 * lockout: failures are counted on the method, so switching secrets or channels does not reset them.
 */

export interface MethodRecord {
  id: number;
  userId: number;
  method: MethodType;
  label: string;
  phoneNumber?: string;
  /** Base32; `null` when lost (then verifying gives `tfa_method_not_configured`). */
  totpSecret?: string | null;
  /** The last TOTP step accepted: a code is good once (RFC 6238 §5.2). */
  lastTotpStep?: number;
  isPrimary: boolean;
  failCount: number;
  /** Epoch ms. */
  lockedUntil: number | null;
  createdAt: number;
  lastUsed: number;
}

/** What a method proves with: its phone number, or its authenticator app's secret. */
export type FactorFields = Partial<Pick<MethodRecord, "phoneNumber" | "totpSecret" | "lastTotpStep">>;

/** Whose method it is and how it shows; its id, counters and times are the store's. */
export type NewMethod = Pick<MethodRecord, "userId" | "method" | "label" | "isPrimary">;

/** The part of the snapshot the methods own. */
export interface SavedMethods {
  nextMethodId: number;
  methods: MethodRecord[];
}

/** 2FA is on: with method rows (`enabled`) or a legacy account's number on file (`legacy`). */
export function tfaEnabled(user: UserRecord): boolean {
  return user.tfaStatus !== "disabled";
}

/** The default label of an SMS method. */
export function smsLabel(phone: string): string {
  return `SMS ${maskPhone(phone)}`;
}

export class Methods {
  private byId = new Map<number, MethodRecord>();
  private nextId = 1;

  constructor(private readonly clock: Clock) {}

  get(id: number): MethodRecord | undefined {
    return this.byId.get(id);
  }

  of(user: UserRecord): MethodRecord[] {
    return [...this.byId.values()].filter((m) => m.userId === user.id).sort((a, b) => a.id - b.id);
  }

  /** One of the user's methods by id (of `type`, when given); `not_found` otherwise. */
  own(user: UserRecord, id: number, type?: MethodType): MethodRecord {
    const method = this.byId.get(id);
    if (!method || method.userId !== user.id || (type && method.method !== type)) {
      throw notFound("not_found", `tfa_method_id ${id} matches no ${type ?? "2FA"} method of yours.`);
    }
    return method;
  }

  /** By id, or the only method of `type`; several of the type need the id. */
  find(user: UserRecord, type: MethodType | undefined, id: number | undefined): MethodRecord | undefined {
    if (id !== undefined) return this.own(user, id, type);
    const candidates = this.of(user).filter((m) => m.method === type);
    if (candidates.length > 1) throw badRequest("bad_request", `You have several ${type} methods: send tfa_method_id.`);
    return candidates[0];
  }

  add(fields: NewMethod, factor: FactorFields): MethodRecord {
    const now = this.clock.now();
    const method: MethodRecord = { id: this.nextId++, ...fields, failCount: 0, lockedUntil: null, createdAt: now, lastUsed: now, ...factor };
    this.byId.set(method.id, method);
    return method;
  }

  delete(id: number): void {
    this.byId.delete(id);
  }

  /** Loses a TOTP method's secret, as an undecryptable secret would: verifying gives `tfa_method_not_configured`. */
  loseTotpSecret(methodId: number): void {
    const method = this.byId.get(methodId);
    if (!method || method.method !== "totp") throw notFound("not_found", `No TOTP method ${methodId}.`);
    method.totpSecret = null;
  }

  /** The method as it stands now: a lock whose time is past is lifted (locks lift when next read; no timer runs). */
  current(method: MethodRecord): MethodRecord {
    this.liftExpiredLock(method);
    return method;
  }

  // ---- lockout ----

  /** Records one attempt on a method: success clears the failures, failure counts toward the lockout. */
  attempt(method: MethodRecord, ok: boolean, failed: Failed): void {
    if (ok) {
      Object.assign(method, { failCount: 0, lockedUntil: null, lastUsed: this.clock.now() });
      return;
    }
    method.failCount++;
    if (method.failCount >= MAX_FAILED_ATTEMPTS) method.lockedUntil = this.clock.now() + LOCKOUT_MS;
    throw failed("Invalid code.", { fail_count: method.failCount, locked_until: seconds(method.lockedUntil) });
  }

  ensureUnlocked(method: MethodRecord): void {
    this.liftExpiredLock(method);
    if (method.lockedUntil === null) return;
    throw new ServiceError("rate_limited", "tfa_locked", "This method is locked after too many failed attempts; use another method or wait.", {
      fail_count: method.failCount,
      locked_until: seconds(method.lockedUntil),
    });
  }

  /** A lock is lifted lazily, when the method is next read: no timer runs. */
  private liftExpiredLock(method: MethodRecord): void {
    if (method.lockedUntil !== null && method.lockedUntil <= this.clock.now()) Object.assign(method, { lockedUntil: null, failCount: 0 });
  }

  // ---- persistence ----

  save(): SavedMethods {
    return { nextMethodId: this.nextId, methods: [...this.byId.values()] };
  }

  load(saved: SavedMethods): void {
    this.nextId = saved.nextMethodId;
    this.byId = new Map(saved.methods.map((m) => [m.id, m]));
  }
}

/** Only the last 4 digits show. */
export function maskPhone(phone: string): string {
  return "*".repeat(Math.max(0, phone.length - 4)) + phone.slice(-4);
}

/** A time as the wire gives it: epoch seconds. */
export function seconds(ms: number): number;
export function seconds(ms: number | null): number | null;
export function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / SECOND);
}
