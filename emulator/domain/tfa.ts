import { createHash } from "node:crypto";
import {
  AuthorizeNewMethodRequest,
  ConfirmAuthorizationRequest,
  ConfirmNewMethodRequest,
  RegenBackupCodesRequest,
  RemoveMethodRequest,
  SendSmsCodeRequest,
  TfaLoginRequest,
  UpdateMethodRequest,
} from "../../sdk/schemas/tfa";
import { base32Decode, base32Encode, totp, totpProvisioningUri, totpStep } from "../../sdk/tfa";
import { Accounts, ApiKeyRecord, UserRecord } from "./accounts";
import { Clock } from "./clock";
import { ServiceError, badRequest, forbidden, notFound, unauthorized } from "./errors";
import { Persistent } from "./persistence";
import { Random } from "./random";

/*
 * Two-factor authentication: methods (SMS, TOTP), email codes, backup codes, challenges, the add-method
 * authorization window and per-method lockout. Rules and constants are documented in emulator/TFA.md.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** A challenge (its secret and the code sent for it) is valid this long (spec). */
export const CHALLENGE_TTL_MS = 10 * MINUTE;
/** The add-method window granted by the authorize-new-method confirm step (spec). */
export const AUTHORIZATION_WINDOW_MS = 30 * MINUTE;
/** How long a method stays locked after too many failures (spec). */
export const LOCKOUT_MS = 15 * MINUTE;
/** Failed attempts on one method that lock it (spec: not shown). */
export const MAX_FAILED_ATTEMPTS = 5;
/** Backup codes per generation (spec). */
export const BACKUP_CODE_COUNT = 10;
/** A resend of an SMS code waits this long after the previous send (spec: not shown). */
export const SMS_RESEND_INTERVAL_MS = 30 * SECOND;
/** SMS codes one user may be sent per window, resends included (spec: not shown). */
export const SMS_RATE_LIMIT = 5;
export const SMS_RATE_WINDOW_MS = HOUR;
/** Codes a phone number that is no one's method may be sent per window, across all users (spec: not shown). */
export const PREAUTH_PHONE_CAP = 3;
export const PREAUTH_PHONE_WINDOW_MS = 24 * HOUR;
/** TOTP codes of this many steps before or after now are accepted (clock drift). */
export const TOTP_DRIFT_STEPS = 1;
/** Random bytes in a TOTP secret (160 bits, as RFC 4226 recommends). */
export const TOTP_SECRET_BYTES = 20;
/** A 2FA login session lasts this long on the emulator clock, then gets `auth_error` (spec: not shown). */
export const SESSION_TTL_MS = 24 * HOUR;
/**
 * An expired challenge, and a used or soft-deleted backup code, is kept this long before it is purged: long
 * enough that a late use still gets `2fa_expired` (or a resend), short enough that the state does not grow.
 */
export const PURGE_AFTER_MS = 24 * HOUR;

/**
 * Reserved phone numbers (in the style of an SMS provider's magic test numbers) that make the emulated
 * provider refuse, so clients can meet these errors deterministically.
 */
export const RESERVED_NUMBERS: Record<string, { kind: "bad_request" | "rate_limited"; code: string; msg: string }> = {
  "+15005550001": { kind: "bad_request", code: "twilio_error", msg: "SMS delivery failed: the number cannot receive SMS." },
  "+15005550004": { kind: "bad_request", code: "sms_blocked_number", msg: "This number is flagged as a high SMS-pumping risk; use another number." },
  "+15005550429": { kind: "rate_limited", code: "twilio_rate_limited", msg: "The SMS provider is rate limiting; retry later." },
};

const BACKUP_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

export type Channel = "sms" | "totp" | "email";
export type MethodType = "sms" | "totp";

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

/**
 * A verification challenge, named by its secret. A login secret (the password step's `tfa_secret`) starts with
 * no code; sending an SMS or email code with that secret attaches the code to it.
 */
export interface ChallengeRecord {
  secret: string;
  userId: number;
  channel: "none" | "sms" | "email";
  /** SHA-256 of the code sent: codes are only ever compared, so the plaintext is not kept (the outbox has it). */
  codeHash?: string;
  /** Wrong codes tried on it while no method row counts them (see `checkChallengeCode`); resends do not reset it. */
  failCount?: number;
  phoneNumber?: string;
  methodId?: number;
  sentAt?: number;
  expiresAt: number;
}

export interface BackupCodeRecord {
  userId: number;
  /** SHA-256 of the code: the plaintext is shown once only. */
  hash: string;
  createdAt: number;
  usedAt: number | null;
  /** Soft deletion: when 2FA was disabled or the codes were regenerated. */
  deletedAt: number | null;
}

export interface AuthorizationRecord {
  userId: number;
  /** The challenge of the authorize-new-method POST, waiting for its PUT. */
  pending?: { secret: string; channel: Channel; methodId?: number };
  /** Epoch ms until which a new method may be added. */
  grantedUntil: number | null;
}

export interface OutboxMessage {
  id: number;
  channel: "sms" | "email";
  /** A phone number (E.164) or an email address. */
  to: string;
  userId: number;
  code: string;
  text: string;
  /** Epoch ms. */
  sentAt: number;
}

interface SmsSend {
  userId: number;
  phoneNumber: string;
  at: number;
  /** Sent to a number that is none of the user's (a method being added): counts toward the phone cap. */
  preauth: boolean;
}

/** One-shot failures of the backing store, switched on through the control API. */
export interface TfaFaults {
  /** The next N add-method authorization checks answer 503 `service_unavailable`. */
  serviceUnavailable: number;
  /** The next N authorize-new-method code flows answer 500 `challenge_creation_failed`. */
  challengeCreationFailed: number;
}

/**
 * Where SMS and email codes "go": tests and developers read them through the control API or in-process. A test
 * aid, in memory only: it is never saved (it holds codes in plaintext and would grow the state file forever).
 */
export class Outbox {
  private messages: OutboxMessage[] = [];
  private nextId = 1;

  push(message: Omit<OutboxMessage, "id">): OutboxMessage {
    const stored = { id: this.nextId++, ...message };
    this.messages.push(stored);
    return stored;
  }

  list(filter: { to?: string; channel?: "sms" | "email" } = {}): OutboxMessage[] {
    return this.messages.filter((m) => (!filter.to || m.to === filter.to) && (!filter.channel || m.channel === filter.channel));
  }

  /** The last message sent to `to`. */
  latest(to: string): OutboxMessage | undefined {
    return this.list({ to }).at(-1);
  }

  clear(): void {
    this.messages = [];
  }
}

export interface TfaSnapshot {
  nextMethodId: number;
  methods: MethodRecord[];
  challenges: ChallengeRecord[];
  backupCodes: BackupCodeRecord[];
  authorizations: AuthorizationRecord[];
  smsLog: SmsSend[];
}

/** What a proof of a second factor verified: a stored method, an email or legacy-SMS code, or a backup code. */
interface Verified {
  channel: Channel | "backup";
  method?: MethodRecord;
}

/** The proof fields shared by login, remove, regenerate and the authorize confirm step. */
type Proof = Pick<TfaLoginRequest, "tfa_method" | "code" | "secret" | "tfa_method_id" | "backup_code">;

/** Verification failures: at login they are `2fa_login_failed`, elsewhere `2fa_verification_failed`. */
type Context = "login" | "verify";

/** Makes the error of a failed verification (its code depends on the context). */
type Failed = (msg: string, extra?: Record<string, unknown>) => ServiceError;

export interface TfaDeps {
  accounts: Accounts;
  clock: Clock;
  random: Random;
}

export class Tfa implements Persistent<TfaSnapshot> {
  readonly outbox = new Outbox();
  readonly faults: TfaFaults = { serviceUnavailable: 0, challengeCreationFailed: 0 };
  private methods = new Map<number, MethodRecord>();
  private challenges = new Map<string, ChallengeRecord>();
  private backupCodes: BackupCodeRecord[] = [];
  private authorizations = new Map<number, AuthorizationRecord>();
  private smsLog: SmsSend[] = [];
  private nextMethodId = 1;

  constructor(private readonly deps: TfaDeps) {}

  private now(): number {
    return this.deps.clock.now();
  }

  // ---- callers ----

  /**
   * The user a 2FA call acts for: the bearer's, or (logged out) the owner of the challenge `secret` names.
   * Every 2FA endpoint goes through here, so the personal-context rule holds everywhere.
   */
  caller(bearer: UserRecord | undefined, secret: string | undefined): UserRecord {
    let user = bearer;
    if (!user) {
      if (!secret) throw unauthorized("missing_auth_value", "Send a bearer key or the tfa_secret of your login.");
      const challenge = this.challenges.get(secret);
      user = challenge && this.deps.accounts.user(challenge.userId);
      if (!user) throw forbidden("auth_error", "No valid authentication: the tfa_secret is unknown.");
    }
    if (user.teamContext) throw forbidden("team_user_forbidden", "2FA actions must be performed in your personal context, not a team context.");
    return user;
  }

  /** The password step of a browser login (not part of this API): a `tfa_secret` the logged-out calls use. */
  beginLogin(user: UserRecord): string {
    return this.newChallenge(user, { channel: "none" }).secret;
  }

  // ---- status ----

  status(user: UserRecord) {
    return {
      success: true,
      tfa_enabled: tfaEnabled(user),
      methods: this.methodsOf(user).map((m) => this.view(m)),
      backup_codes_remaining: this.activeBackupCodes(user).length,
      new_method_authorized: this.authorized(user),
    };
  }

  /** A method as the wire shows it: phone masked, TOTP secret never, times in epoch seconds. */
  view(method: MethodRecord) {
    this.liftExpiredLock(method);
    return {
      id: method.id,
      user_id: method.userId,
      method: method.method,
      label: method.label,
      phone_number: method.phoneNumber ? maskPhone(method.phoneNumber) : null,
      is_primary: method.isPrimary,
      fail_count: method.failCount,
      locked_until: seconds(method.lockedUntil),
      created_at: seconds(method.createdAt),
      last_used: seconds(method.lastUsed),
    };
  }

  // ---- login ----

  /**
   * Completes a login: verifies the second factor and opens a session of `SESSION_TTL_MS`. The session may do
   * what the `presented` key may (a scoped key plus a second factor stays scoped); a browser login (a secret
   * and no key) gets full access, as a console login does.
   */
  login(user: UserRecord, request: TfaLoginRequest, presented: ApiKeyRecord | undefined) {
    // The routes refuse instance keys already; a session without the instance binding would widen one.
    if (presented?.instanceId !== undefined) throw forbidden("permission_denied", "An instance API key cannot open a session.");
    if (!tfaEnabled(user)) throw badRequest("2fa_login_failed", "Two-factor authentication is not enabled on this account.");
    if (request.admin && !user.isAdmin) throw badRequest("2fa_login_failed", "An admin session needs an admin account.");
    const verified = this.verify(user, request, "login");
    // The login secret has served its purpose, whichever factor completed it.
    if (request.secret && this.challenges.get(request.secret)?.userId === user.id) this.challenges.delete(request.secret);
    const session = this.deps.accounts.issueKey(user.id, {
      name: request.admin ? "admin session" : "session",
      permissions: presented?.permissions ?? null,
      session: true,
      expiresAt: this.now() + SESSION_TTL_MS,
    });
    const remaining = this.activeBackupCodes(user).length;
    return {
      sessionKey: session.key,
      backupCodesRemaining: verified.channel === "backup" && remaining > 0 ? remaining : undefined,
      legacy: user.tfaStatus === "legacy",
    };
  }

  // ---- sending codes ----

  sendEmailCode(user: UserRecord, secret?: string): ChallengeRecord {
    return this.sendEmail(user, secret === undefined ? undefined : this.reusable(user, secret));
  }

  /** `POST /tfa/sms/` (and deprecated `/tfa/test/`). */
  sendSmsCode(user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
    const existing = request.secret === undefined ? undefined : this.reusable(user, request.secret);
    const target = this.smsTarget(user, request);
    const live = [...this.challenges.values()].find(
      (c) => c.userId === user.id && c.channel === "sms" && c.phoneNumber === target.phoneNumber && c.expiresAt > this.now(),
    );
    if (live) throw badRequest("tfa_challenge_exists", "A code was sent to this number recently and is still valid; use resend.");
    return this.sendSms(user, target, existing, { adminExempt: true });
  }

  /** `POST /tfa/sms/resend/` (and deprecated `/tfa/resend/`): a new code for an earlier SMS challenge. */
  resendSmsCode(user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
    const original = request.secret !== undefined ? this.ownChallenge(user, request.secret) : this.latestSmsChallenge(user);
    if (!original || original.channel !== "sms") throw badRequest("no_challenge_found", "No SMS code was sent in this context; send one first.");
    const phone = request.tfa_method_id !== undefined ? this.ownMethod(user, request.tfa_method_id, "sms").phoneNumber : request.phone_number;
    if (phone !== undefined && phone !== original.phoneNumber) {
      throw badRequest("phone_number_mismatch", "The phone number differs from the one the code was sent to.");
    }
    const waitMs = original.sentAt! + SMS_RESEND_INTERVAL_MS - this.now();
    if (waitMs > 0) throw new ServiceError("rate_limited", "sms_rate_limited", `Wait ${Math.ceil(waitMs / SECOND)} s before asking for another code.`);
    // With a secret the same challenge gets the new code; without one (bearer) a new secret replaces the old.
    const reuse = request.secret !== undefined ? original : undefined;
    const target = { phoneNumber: original.phoneNumber!, methodId: original.methodId };
    const sent = this.sendSms(user, target, reuse, { adminExempt: true, resend: true });
    if (!reuse) this.challenges.delete(original.secret);
    return sent;
  }

  // ---- adding a method ----

  /** `POST /tfa/authorize-new-method/`: a code sent (or expected from TOTP), or the window granted by a backup code. */
  authorizeNewMethod(user: UserRecord, request: AuthorizeNewMethodRequest): { secret?: string } {
    if (request.backup_code) {
      this.useBackupCode(user, request.backup_code);
      this.grant(user);
      return {};
    }
    const { channel, method } = this.authorizingFactor(user, request);
    if (this.faults.challengeCreationFailed > 0) {
      this.faults.challengeCreationFailed--;
      throw new ServiceError("internal", "challenge_creation_failed", "The challenge could not be created; retry.");
    }
    const challenge =
      channel === "email"
        ? this.sendEmail(user)
        : channel === "sms"
          ? this.sendSms(user, { phoneNumber: method!.phoneNumber!, methodId: method!.id }, undefined, { adminExempt: false })
          : this.newChallenge(user, { channel: "none", methodId: method!.id });
    this.authorization(user).pending = { secret: challenge.secret, channel, methodId: method?.id };
    return { secret: challenge.secret };
  }

  /** `PUT /tfa/authorize-new-method/`: the code of the pending authorization opens the 30-minute window. */
  confirmAuthorization(user: UserRecord, request: ConfirmAuthorizationRequest): void {
    if (!request.code || !request.secret) throw badRequest("missing_params", "Send both code and secret.");
    const pending = this.authorizations.get(user.id)?.pending;
    if (!pending) throw badRequest("no_pending_authorization", "No authorization is pending; start with POST authorize-new-method.");
    // Gone when voided by wrong codes, replaced by a resend, or purged long after expiring.
    const challenge = this.challenges.get(pending.secret);
    if (pending.secret !== request.secret || !challenge) throw badRequest("challenge_not_found", "No challenge matches the secret.");
    this.ensureLive(challenge);
    this.verify(user, { tfa_method: pending.channel, code: request.code, secret: pending.secret, tfa_method_id: pending.methodId }, "verify");
    this.challenges.delete(pending.secret);
    this.grant(user);
  }

  /** `POST /tfa/totp-setup/`: a fresh secret for an authenticator app; nothing is stored until confirm-new. */
  totpSetup(user: UserRecord) {
    const bytes = Uint8Array.from({ length: TOTP_SECRET_BYTES }, () => this.deps.random.int(0, 255));
    const secret = base32Encode(bytes);
    return { secret, provisioning_uri: totpProvisioningUri(secret, user.email || user.username) };
  }

  /**
   * `POST /tfa/confirm-new/` (and deprecated `/tfa/test-submit/`, where a legacy account is told to migrate
   * first): adds an SMS or TOTP method inside the authorization window. The first method brings backup codes.
   */
  confirmNewMethod(user: UserRecord, request: ConfirmNewMethodRequest, deprecatedPath = false) {
    if (deprecatedPath && user.tfaStatus === "legacy") {
      throw badRequest("untracked_2fa_found", "This account has legacy 2FA; regenerate backup codes first to migrate it.");
    }
    const type = methodType(request.tfa_method);
    if (!request.code || !request.secret) throw badRequest("missing_params", "Send both code and secret.");
    this.requireAuthorization(user);
    const fields = type === "totp" ? this.newTotpFields(user, request.secret, request.code) : this.newSmsFields(user, request);
    const first = this.methodsOf(user).length === 0;
    const now = this.now();
    const method: MethodRecord = {
      id: this.nextMethodId++,
      userId: user.id,
      method: type,
      label: request.label ?? (type === "sms" ? `SMS ${maskPhone(fields.phoneNumber!)}` : "Authenticator app"),
      isPrimary: first,
      failCount: 0,
      lockedUntil: null,
      createdAt: now,
      lastUsed: now,
      ...fields,
    };
    this.methods.set(method.id, method);
    user.tfaStatus = "enabled";
    return { method, backupCodes: first ? this.replaceBackupCodes(user) : undefined };
  }

  // ---- changing methods and codes ----

  /** `DELETE /tfa/`: removes the target (default: the verifying method); the last one going disables 2FA. */
  removeMethod(user: UserRecord, request: RemoveMethodRequest): { remaining: number } {
    if (request.backup_code && request.target_id === undefined) throw badRequest("bad_request", "target_id is required with backup_code.");
    const target = request.target_id === undefined ? undefined : this.ownMethod(user, request.target_id);
    const verified = this.verify(user, request, "verify");
    const removed = target ?? verified.method;
    if (!removed) throw badRequest("bad_request", "target_id is required when verifying by email.");
    this.methods.delete(removed.id);
    const remaining = this.methodsOf(user);
    if (remaining.length === 0) this.disable(user);
    else if (removed.isPrimary) remaining[0].isPrimary = true;
    return { remaining: remaining.length };
  }

  /** `PUT /tfa/update/`: label and primary flag. */
  updateMethod(user: UserRecord, request: UpdateMethodRequest): MethodRecord {
    const type = request.tfa_method === undefined ? undefined : methodType(request.tfa_method);
    if (request.tfa_method_id === undefined && type === undefined) throw badRequest("bad_request", "Send tfa_method_id or tfa_method.");
    const method = this.findMethod(user, type, request.tfa_method_id);
    if (!method) throw notFound("not_found", `No ${type} method is configured.`);
    if (request.label !== undefined) method.label = request.label;
    if (request.is_primary === true) for (const m of this.methodsOf(user)) m.isPrimary = m === method;
    if (request.is_primary === false) method.isPrimary = false;
    return method;
  }

  /**
   * `PUT /tfa/regen-backup-codes/`: ten new codes replace all others. A legacy account (2FA on, no method rows)
   * first gets an SMS method from the number on file: that is its migration.
   */
  regenerateBackupCodes(user: UserRecord, request: RegenBackupCodesRequest): string[] {
    if (!tfaEnabled(user)) throw badRequest("2fa_verification_failed", "Two-factor authentication is not enabled on this account.");
    const migrating = user.tfaStatus === "legacy" && this.methodsOf(user).length === 0;
    // Before verifying, so no code is spent on a migration that cannot happen.
    if (migrating && !user.phoneNumber) throw badRequest("missing_phone_number", "The legacy account has no phone number on file to migrate.");
    // Verified first (a legacy account against its number on file): a refused request changes nothing.
    this.verify(user, request, "verify");
    if (migrating) this.migrateLegacy(user, user.phoneNumber!);
    return this.replaceBackupCodes(user);
  }

  // ---- emulator controls ----

  /** Makes the account a legacy 2FA account: 2FA on, SMS to the number on file, no method rows, no backup codes. */
  makeLegacy(user: UserRecord): void {
    if (this.methodsOf(user).length > 0) throw badRequest("invalid_args", "A legacy account has no method rows: remove the methods first.");
    this.softDeleteBackupCodes(user);
    user.tfaStatus = "legacy";
  }

  /** Loses a TOTP method's secret, as an undecryptable secret would: verifying gives `tfa_method_not_configured`. */
  loseTotpSecret(methodId: number): void {
    const method = this.methods.get(methodId);
    if (!method || method.method !== "totp") throw notFound("not_found", `No TOTP method ${methodId}.`);
    method.totpSecret = null;
  }

  methodsOf(user: UserRecord): MethodRecord[] {
    return [...this.methods.values()].filter((m) => m.userId === user.id).sort((a, b) => a.id - b.id);
  }

  // ---- persistence ----

  snapshot(): TfaSnapshot {
    return structuredClone({
      nextMethodId: this.nextMethodId,
      methods: [...this.methods.values()],
      challenges: [...this.challenges.values()],
      backupCodes: this.backupCodes,
      authorizations: [...this.authorizations.values()],
      smsLog: this.smsLog,
    });
  }

  restore(data: TfaSnapshot): void {
    const copy = structuredClone(data);
    this.nextMethodId = copy.nextMethodId;
    this.methods = new Map(copy.methods.map((m) => [m.id, m]));
    this.challenges = new Map(copy.challenges.map((c) => [c.secret, c]));
    this.backupCodes = copy.backupCodes;
    this.authorizations = new Map(copy.authorizations.map((a) => [a.userId, a]));
    this.smsLog = copy.smsLog;
  }

  // ---- verification: the one mechanism behind login, remove, regenerate and the authorize confirm step ----

  private verify(user: UserRecord, proof: Proof, context: Context): Verified {
    const failed: Failed = (msg, extra) => badRequest(context === "login" ? "2fa_login_failed" : "2fa_verification_failed", msg, extra);
    if (proof.backup_code) {
      this.useBackupCode(user, proof.backup_code);
      return { channel: "backup" };
    }
    const channel = channelOf(proof.tfa_method ?? "sms");
    if (!proof.code) throw badRequest("missing_auth_value", "Send code (or backup_code).");
    if (channel === "totp") return this.verifyTotp(user, proof.code, proof.tfa_method_id, failed);
    if (!proof.secret) throw badRequest("missing_params", `A ${channel} code needs the secret its sending returned.`);
    const challenge = this.codeChallenge(user, proof.secret, channel);
    const method = channel === "sms" ? this.smsMethodFor(user, challenge, proof.tfa_method_id) : undefined;
    if (channel === "sms" && !method) this.ensureLegacyNumber(user, challenge, failed);
    if (method) this.ensureUnlocked(method);
    this.ensureLive(challenge);
    // A method counts the failures toward its lockout; without one (email, legacy SMS) the challenge does.
    if (method) this.attempt(method, codeMatches(challenge, proof.code), failed);
    else this.checkChallengeCode(challenge, proof.code, failed);
    this.challenges.delete(challenge.secret);
    return { channel, method };
  }

  /** Only a legacy account verifies SMS without a method row, and only a code sent to its number on file. */
  private ensureLegacyNumber(user: UserRecord, challenge: ChallengeRecord, failed: Failed): void {
    if (user.tfaStatus !== "legacy") throw failed("The code was not sent to a configured SMS method.");
    if (challenge.phoneNumber !== user.phoneNumber) throw badRequest("phone_number_mismatch", "The code was sent to another number than the one on file.");
  }

  private verifyTotp(user: UserRecord, code: string, methodId: number | undefined, failed: Failed): Verified {
    const method = this.findMethod(user, "totp", methodId);
    if (!method) throw failed("No authenticator app (TOTP) method is configured.");
    if (!method.totpSecret) {
      throw badRequest("tfa_method_not_configured", "The authenticator method's secret is missing or cannot be decrypted; reconfigure 2FA.");
    }
    this.ensureUnlocked(method);
    const step = matchTotp(method.totpSecret, code, this.now());
    const fresh = step !== undefined && step > (method.lastTotpStep ?? -1);
    this.attempt(method, fresh, failed);
    method.lastTotpStep = step;
    return { channel: "totp", method };
  }

  /** Records one attempt on a method: success clears the failures, failure counts toward the lockout. */
  private attempt(method: MethodRecord, ok: boolean, failed: Failed): void {
    if (ok) {
      Object.assign(method, { failCount: 0, lockedUntil: null, lastUsed: this.now() });
      return;
    }
    method.failCount++;
    if (method.failCount >= MAX_FAILED_ATTEMPTS) method.lockedUntil = this.now() + LOCKOUT_MS;
    throw failed("Invalid code.", { fail_count: method.failCount, locked_until: seconds(method.lockedUntil) });
  }

  /**
   * A code with no method row to lock (email, legacy SMS, a number being added): the challenge counts the wrong
   * codes itself and is void after as many as lock a method, so a 6-digit code cannot be guessed without limit.
   */
  private checkChallengeCode(challenge: ChallengeRecord, code: string, failed: Failed): void {
    if (codeMatches(challenge, code)) return;
    challenge.failCount = (challenge.failCount ?? 0) + 1;
    if (challenge.failCount < MAX_FAILED_ATTEMPTS) throw failed("Invalid code.");
    this.challenges.delete(challenge.secret);
    throw failed("Invalid code. Too many wrong codes: this code is void; request a new one.");
  }

  private ensureUnlocked(method: MethodRecord): void {
    this.liftExpiredLock(method);
    if (method.lockedUntil === null) return;
    throw new ServiceError("rate_limited", "tfa_locked", "This method is locked after too many failed attempts; use another method or wait.", {
      fail_count: method.failCount,
      locked_until: seconds(method.lockedUntil),
    });
  }

  private liftExpiredLock(method: MethodRecord): void {
    if (method.lockedUntil !== null && method.lockedUntil <= this.now()) Object.assign(method, { lockedUntil: null, failCount: 0 });
  }

  private useBackupCode(user: UserRecord, code: string): void {
    const hash = hashBackupCode(code);
    const record = this.activeBackupCodes(user).find((c) => c.hash === hash);
    if (!record) throw unauthorized("invalid_backup_code", "The backup code is invalid or was already used.");
    record.usedAt = this.now();
  }

  // ---- challenges ----

  private newChallenge(user: UserRecord, fields: Partial<ChallengeRecord> & Pick<ChallengeRecord, "channel">): ChallengeRecord {
    this.purgeChallenges();
    const secret = this.deps.random.hex(32);
    // A secret names its owner's challenge (and a logged-out caller by it): never hand one out twice.
    if (this.challenges.has(secret)) throw new ServiceError("internal", "challenge_creation_failed", "The challenge could not be created; retry.");
    const challenge: ChallengeRecord = { secret, userId: user.id, expiresAt: this.now() + CHALLENGE_TTL_MS, ...fields };
    this.challenges.set(secret, challenge);
    return challenge;
  }

  /** Challenges expired more than `PURGE_AFTER_MS` ago: no answer needs them any more. */
  private purgeChallenges(): void {
    const before = this.now() - PURGE_AFTER_MS;
    for (const [secret, challenge] of this.challenges) if (challenge.expiresAt <= before) this.challenges.delete(secret);
  }

  /** A fresh code on `existing` (renewing its validity) or on a new challenge; the plaintext code is for delivery only. */
  private issueCode(
    user: UserRecord,
    fields: Pick<ChallengeRecord, "channel" | "phoneNumber" | "methodId">,
    existing?: ChallengeRecord,
  ): { challenge: ChallengeRecord; code: string } {
    const code = String(this.deps.random.int(0, 999_999)).padStart(6, "0");
    const now = this.now();
    const update = { ...fields, codeHash: sha256(code), sentAt: now, expiresAt: now + CHALLENGE_TTL_MS };
    return { challenge: existing ? Object.assign(existing, update) : this.newChallenge(user, update), code };
  }

  /** The caller's challenge named by `secret`, expired or not. */
  private ownChallenge(user: UserRecord, secret: string): ChallengeRecord {
    const challenge = this.challenges.get(secret);
    if (!challenge || challenge.userId !== user.id) throw badRequest("challenge_not_found", "No challenge matches the secret.");
    return challenge;
  }

  /** A challenge a new code may be attached to: the caller's and still valid. */
  private reusable(user: UserRecord, secret: string): ChallengeRecord {
    const challenge = this.ownChallenge(user, secret);
    this.ensureLive(challenge);
    return challenge;
  }

  /** The challenge carrying the `channel` code to verify. */
  private codeChallenge(user: UserRecord, secret: string, channel: "sms" | "email"): ChallengeRecord {
    const challenge = this.ownChallenge(user, secret);
    if (challenge.channel !== channel) throw badRequest("challenge_not_found", `No ${channel} challenge matches the secret.`);
    return challenge;
  }

  private ensureLive(challenge: ChallengeRecord): void {
    if (challenge.expiresAt <= this.now()) throw badRequest("2fa_expired", "The challenge expired (codes are valid for 10 minutes); request a new code.");
  }

  private latestSmsChallenge(user: UserRecord): ChallengeRecord | undefined {
    return [...this.challenges.values()].filter((c) => c.userId === user.id && c.channel === "sms").sort((a, b) => a.sentAt! - b.sentAt!).at(-1);
  }

  // ---- sending ----

  private sendEmail(user: UserRecord, existing?: ChallengeRecord): ChallengeRecord {
    if (!user.email) throw badRequest("missing_email", "The account has no email address.");
    this.requireVerifiedEmail(user);
    const { challenge, code } = this.issueCode(user, { channel: "email", phoneNumber: undefined, methodId: undefined }, existing);
    this.deliver(user, "email", user.email, code);
    return challenge;
  }

  /** Sends an SMS code after the account and number rules, then through the (emulated) provider. */
  private sendSms(
    user: UserRecord,
    target: { phoneNumber: string; methodId?: number },
    existing: ChallengeRecord | undefined,
    options: { adminExempt: boolean; resend?: boolean },
  ): ChallengeRecord {
    if (!(options.adminExempt && user.isAdmin)) this.requireVerifiedEmail(user);
    if (user.smsFraud) throw forbidden("sms_fraud_detected", "SMS is disabled on this account until support clears it.");
    const now = this.now();
    this.smsLog = this.smsLog.filter((s) => s.at > now - Math.max(SMS_RATE_WINDOW_MS, PREAUTH_PHONE_WINDOW_MS));
    if (this.smsLog.filter((s) => s.userId === user.id && s.at > now - SMS_RATE_WINDOW_MS).length >= SMS_RATE_LIMIT) {
      throw new ServiceError("rate_limited", "sms_rate_limited", "Too many SMS codes requested; try again later.");
    }
    // A first code to a number that is none of the user's is an attempt to add it; a resend is the same attempt.
    const preauth = !options.resend && target.methodId === undefined && target.phoneNumber !== user.phoneNumber;
    if (preauth && this.smsLog.filter((s) => s.preauth && s.phoneNumber === target.phoneNumber).length >= PREAUTH_PHONE_CAP) {
      throw new ServiceError("rate_limited", "preauth_phone_cap", "This phone number was used in too many authorization attempts.");
    }
    const refusal = RESERVED_NUMBERS[target.phoneNumber];
    if (refusal) throw new ServiceError(refusal.kind, refusal.code, refusal.msg);
    const { challenge, code } = this.issueCode(user, { channel: "sms", ...target }, existing);
    this.smsLog.push({ userId: user.id, phoneNumber: target.phoneNumber, at: now, preauth });
    this.deliver(user, "sms", target.phoneNumber, code);
    return challenge;
  }

  private deliver(user: UserRecord, channel: "sms" | "email", to: string, code: string): void {
    this.outbox.push({ channel, to, userId: user.id, code, text: `Your GPU Rental verification code is ${code}. It expires in 10 minutes.`, sentAt: this.now() });
  }

  private requireVerifiedEmail(user: UserRecord): void {
    if (!user.emailVerified) throw badRequest("email_not_verified", "Verify your account's email address before using 2FA codes.");
  }

  /** Where an SMS goes: the given method's number, a given number, or the number on file (else the primary method's). */
  private smsTarget(user: UserRecord, request: SendSmsCodeRequest): { phoneNumber: string; methodId?: number } {
    if (request.tfa_method_id !== undefined) {
      const method = this.ownMethod(user, request.tfa_method_id, "sms");
      if (request.phone_number !== undefined && request.phone_number !== method.phoneNumber) {
        throw badRequest("phone_number_mismatch", "The phone number differs from the method's.");
      }
      return { phoneNumber: method.phoneNumber!, methodId: method.id };
    }
    const sms = this.methodsOf(user).filter((m) => m.method === "sms");
    const phoneNumber = request.phone_number ?? user.phoneNumber ?? (sms.find((m) => m.isPrimary) ?? sms[0])?.phoneNumber;
    if (!phoneNumber) throw badRequest("missing_phone_number", "Send phone_number: the account has no number on file.");
    return { phoneNumber, methodId: sms.find((m) => m.phoneNumber === phoneNumber)?.id };
  }

  // ---- methods ----

  /** One of the user's methods by id (of `type`, when given); `not_found` otherwise. */
  private ownMethod(user: UserRecord, id: number, type?: MethodType): MethodRecord {
    const method = this.methods.get(id);
    if (!method || method.userId !== user.id || (type && method.method !== type)) {
      throw notFound("not_found", `tfa_method_id ${id} matches no ${type ?? "2FA"} method of yours.`);
    }
    return method;
  }

  /** By id, or the only method of `type`; several of the type need the id. */
  private findMethod(user: UserRecord, type: MethodType | undefined, id: number | undefined): MethodRecord | undefined {
    if (id !== undefined) return this.ownMethod(user, id, type);
    const candidates = this.methodsOf(user).filter((m) => m.method === type);
    if (candidates.length > 1) throw badRequest("bad_request", `You have several ${type} methods: send tfa_method_id.`);
    return candidates[0];
  }

  /** The SMS method a code was verified against: named by id, by the challenge, or by the challenge's number. */
  private smsMethodFor(user: UserRecord, challenge: ChallengeRecord, id: number | undefined): MethodRecord | undefined {
    const method =
      id !== undefined
        ? this.ownMethod(user, id, "sms")
        : challenge.methodId !== undefined
          ? this.methods.get(challenge.methodId)
          : this.methodsOf(user).find((m) => m.method === "sms" && m.phoneNumber === challenge.phoneNumber);
    if (method && method.phoneNumber !== challenge.phoneNumber) {
      throw badRequest("phone_number_mismatch", "The code was sent to another number than this method's.");
    }
    return method;
  }

  /** What proves the caller may add a method: a user with no methods is forced to email. */
  private authorizingFactor(user: UserRecord, request: AuthorizeNewMethodRequest): { channel: Channel; method?: MethodRecord } {
    const methods = this.methodsOf(user);
    if (methods.length === 0) return { channel: "email" };
    if (request.tfa_method_id !== undefined) {
      const method = this.ownMethod(user, request.tfa_method_id, request.tfa_method === undefined ? undefined : methodType(request.tfa_method));
      return { channel: method.method, method };
    }
    if (request.tfa_method === undefined) {
      if (methods.length > 1) throw badRequest("bad_request", "Send tfa_method (or tfa_method_id): you have several methods.");
      return { channel: methods[0].method, method: methods[0] };
    }
    const channel = channelOf(request.tfa_method);
    if (channel === "email") return { channel };
    const method = this.findMethod(user, channel, undefined);
    if (!method) throw notFound("not_found", `No ${channel} method is configured.`);
    return { channel, method };
  }

  private newTotpFields(user: UserRecord, secret: string, code: string): Partial<MethodRecord> {
    if (this.methodsOf(user).some((m) => m.method === "totp")) throw badRequest("duplicate_tfa_method", "An authenticator app (TOTP) method is already configured.");
    let step: number | undefined;
    try {
      // At least 80 bits, as RFC 4226 requires of a shared secret.
      if (base32Decode(secret).length < 10) throw new Error("too short");
      step = matchTotp(secret, code, this.now());
    } catch {
      throw badRequest("bad_request", "secret is not a base32 TOTP secret of at least 80 bits (use the one totp-setup returned).");
    }
    if (step === undefined) throw badRequest("2fa_verification_failed", "Invalid code for this secret.");
    return { totpSecret: secret.replace(/[\s=]/g, "").toUpperCase(), lastTotpStep: step };
  }

  private newSmsFields(user: UserRecord, request: ConfirmNewMethodRequest): Partial<MethodRecord> {
    const phoneNumber = request.phone_number;
    if (!phoneNumber) throw badRequest("missing_phone_number", "Send phone_number for an SMS method.");
    if (this.methodsOf(user).some((m) => m.method === "sms" && m.phoneNumber === phoneNumber)) {
      throw badRequest("duplicate_tfa_method", "This phone number is already an SMS method.");
    }
    const challenge = this.codeChallenge(user, request.secret!, "sms");
    if (challenge.phoneNumber !== phoneNumber) throw badRequest("phone_number_mismatch", "The code was sent to another number.");
    this.ensureLive(challenge);
    this.checkChallengeCode(challenge, request.code!, (msg) => badRequest("2fa_verification_failed", msg));
    this.challenges.delete(challenge.secret);
    return { phoneNumber };
  }

  /** A legacy account's number on file becomes its SMS method (called once its code is verified). */
  private migrateLegacy(user: UserRecord, phoneNumber: string): void {
    const now = this.now();
    const method: MethodRecord = {
      id: this.nextMethodId++,
      userId: user.id,
      method: "sms",
      label: `SMS ${maskPhone(phoneNumber)}`,
      phoneNumber,
      isPrimary: true,
      failCount: 0,
      lockedUntil: null,
      createdAt: now,
      lastUsed: now,
    };
    this.methods.set(method.id, method);
    user.tfaStatus = "enabled";
  }

  // ---- authorization window ----

  private authorization(user: UserRecord): AuthorizationRecord {
    let record = this.authorizations.get(user.id);
    if (!record) this.authorizations.set(user.id, (record = { userId: user.id, grantedUntil: null }));
    return record;
  }

  private grant(user: UserRecord): void {
    Object.assign(this.authorization(user), { pending: undefined, grantedUntil: this.now() + AUTHORIZATION_WINDOW_MS });
  }

  private authorized(user: UserRecord): boolean {
    const until = this.authorizations.get(user.id)?.grantedUntil;
    return until != null && until > this.now();
  }

  private requireAuthorization(user: UserRecord): void {
    if (this.faults.serviceUnavailable > 0) {
      this.faults.serviceUnavailable--;
      throw new ServiceError("unavailable", "service_unavailable", "The authorization store is unavailable; retry.");
    }
    if (!this.authorized(user)) {
      throw forbidden("authorization_required", "Adding a method needs authorization: POST then PUT authorize-new-method (valid 30 minutes).");
    }
  }

  // ---- backup codes and disabling ----

  private activeBackupCodes(user: UserRecord): BackupCodeRecord[] {
    return this.backupCodes.filter((c) => c.userId === user.id && c.usedAt === null && c.deletedAt === null);
  }

  private replaceBackupCodes(user: UserRecord): string[] {
    this.purgeSpentBackupCodes();
    this.softDeleteBackupCodes(user);
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => this.newBackupCode());
    const now = this.now();
    for (const code of codes) this.backupCodes.push({ userId: user.id, hash: hashBackupCode(code), createdAt: now, usedAt: null, deletedAt: null });
    return codes;
  }

  private newBackupCode(): string {
    const group = () => Array.from({ length: 4 }, () => this.deps.random.pick([...BACKUP_ALPHABET])).join("");
    return `${group()}-${group()}-${group()}`;
  }

  /** Codes used or soft-deleted more than `PURGE_AFTER_MS` ago: dropped where new ones are made, so rows stay bounded. */
  private purgeSpentBackupCodes(): void {
    const before = this.now() - PURGE_AFTER_MS;
    this.backupCodes = this.backupCodes.filter((c) => Math.min(c.usedAt ?? Infinity, c.deletedAt ?? Infinity) > before);
  }

  private softDeleteBackupCodes(user: UserRecord): void {
    const now = this.now();
    for (const code of this.backupCodes) if (code.userId === user.id && code.deletedAt === null) code.deletedAt = now;
  }

  /** The last method went: 2FA is off, backup codes are soft-deleted, any authorization is dropped. */
  private disable(user: UserRecord): void {
    this.softDeleteBackupCodes(user);
    this.authorizations.delete(user.id);
    user.tfaStatus = "disabled";
  }
}

function tfaEnabled(user: UserRecord): boolean {
  return user.tfaStatus !== "disabled";
}

/** `sms`, `totp` or `email`; anything else is `invalid_tfa_method`. */
function channelOf(name: string): Channel {
  if (name === "sms" || name === "totp" || name === "email") return name;
  throw badRequest("invalid_tfa_method", `Unsupported tfa_method ${JSON.stringify(name)}: use sms, totp or email.`);
}

/** A stored method type: email is never stored as a method. */
function methodType(name: string): MethodType {
  const channel = channelOf(name);
  if (channel === "email") throw badRequest("invalid_tfa_method", "email is not a stored method: use sms or totp.");
  return channel;
}

/** The step whose code `code` is, within the drift allowed, or undefined. */
function matchTotp(secret: string, code: string, nowMs: number): number | undefined {
  const now = totpStep(nowMs);
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    if (totp(secret, step * 30 * SECOND) === code) return step;
  }
  return undefined;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function hashBackupCode(code: string): string {
  return sha256(code.trim().toUpperCase());
}

/** Whether `code` is the one sent for the challenge (a login secret alone has none). */
function codeMatches(challenge: ChallengeRecord, code: string): boolean {
  return challenge.codeHash !== undefined && challenge.codeHash === sha256(code);
}

/** Only the last 4 digits show. */
function maskPhone(phone: string): string {
  return "*".repeat(Math.max(0, phone.length - 4)) + phone.slice(-4);
}

function seconds(ms: number): number;
function seconds(ms: number | null): number | null;
function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / SECOND);
}
