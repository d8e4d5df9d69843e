import type { UserRecord } from "../records";
import { Clock } from "../clock";
import { ServiceError, badRequest } from "../errors";
import { Random } from "../random";
import { CHALLENGE_TTL_MS, MAX_FAILED_ATTEMPTS, PURGE_AFTER_MS } from "./constants";
import { sha256 } from "./hash";
import type { Failed } from "./failures";

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
  /** Wrong codes tried on it while no method row counts them (see `checkCode`); resends do not reset it. */
  failCount?: number;
  phoneNumber?: string;
  methodId?: number;
  sentAt?: number;
  expiresAt: number;
}

type NewChallenge = Partial<ChallengeRecord> & Pick<ChallengeRecord, "channel">;

/** A challenge could not be stored: a clash of secrets, or the `challengeCreationFailed` fault. */
export function challengeCreationFailed(): ServiceError {
  return new ServiceError("internal", "challenge_creation_failed", "The challenge could not be created; retry.");
}

/** Whether `code` is the one sent for the challenge (a login secret alone has none). */
export function codeMatches(challenge: ChallengeRecord, code: string): boolean {
  return challenge.codeHash !== undefined && challenge.codeHash === sha256(code);
}

export class Challenges {
  private bySecret = new Map<string, ChallengeRecord>();

  constructor(private readonly clock: Clock, private readonly random: Random) {}

  get(secret: string): ChallengeRecord | undefined {
    return this.bySecret.get(secret);
  }

  delete(secret: string): void {
    this.bySecret.delete(secret);
  }

  create(user: UserRecord, fields: NewChallenge): ChallengeRecord {
    this.purge();
    const secret = this.random.hex(32);
    // A secret names its owner's challenge (and a logged-out caller by it): never hand one out twice.
    if (this.bySecret.has(secret)) throw challengeCreationFailed();
    const challenge: ChallengeRecord = { secret, userId: user.id, expiresAt: this.clock.now() + CHALLENGE_TTL_MS, ...fields };
    this.bySecret.set(secret, challenge);
    return challenge;
  }

  /** A fresh code on `existing` (renewing its validity) or on a new challenge; the plaintext code is for delivery only. */
  issueCode(
    user: UserRecord,
    fields: Pick<ChallengeRecord, "channel" | "phoneNumber" | "methodId">,
    existing?: ChallengeRecord,
  ): { challenge: ChallengeRecord; code: string } {
    const code = String(this.random.int(0, 999_999)).padStart(6, "0");
    const now = this.clock.now();
    const update = { ...fields, codeHash: sha256(code), sentAt: now, expiresAt: now + CHALLENGE_TTL_MS };
    return { challenge: existing ? Object.assign(existing, update) : this.create(user, update), code };
  }

  // ---- finding the caller's challenges ----

  /** The caller's challenge named by `secret`, expired or not. */
  own(user: UserRecord, secret: string): ChallengeRecord {
    const challenge = this.bySecret.get(secret);
    if (!challenge || challenge.userId !== user.id) throw badRequest("challenge_not_found", "No challenge matches the secret.");
    return challenge;
  }

  /** A challenge a new code may be attached to: the caller's and still valid. */
  reusable(user: UserRecord, secret: string): ChallengeRecord {
    const challenge = this.own(user, secret);
    this.ensureLive(challenge);
    return challenge;
  }

  /** The challenge carrying the `channel` code to verify. */
  forCode(user: UserRecord, secret: string, channel: "sms" | "email"): ChallengeRecord {
    const challenge = this.own(user, secret);
    if (challenge.channel !== channel) throw badRequest("challenge_not_found", `No ${channel} challenge matches the secret.`);
    return challenge;
  }

  /** The user's SMS challenge to `phoneNumber` that is still valid, if any. */
  liveSms(user: UserRecord, phoneNumber: string): ChallengeRecord | undefined {
    return [...this.bySecret.values()].find(
      (c) => c.userId === user.id && c.channel === "sms" && c.phoneNumber === phoneNumber && c.expiresAt > this.clock.now(),
    );
  }

  latestSms(user: UserRecord): ChallengeRecord | undefined {
    return [...this.bySecret.values()].filter((c) => c.userId === user.id && c.channel === "sms").sort((a, b) => a.sentAt! - b.sentAt!).at(-1);
  }

  // ---- expiry and guessing ----

  ensureLive(challenge: ChallengeRecord): void {
    if (challenge.expiresAt <= this.clock.now()) throw badRequest("2fa_expired", "The challenge expired (codes are valid for 10 minutes); request a new code.");
  }

  /**
   * A code with no method row to lock (email, legacy SMS, a number being added): the challenge counts the wrong
   * codes itself and is void after as many as lock a method, so a 6-digit code cannot be guessed without limit.
   */
  checkCode(challenge: ChallengeRecord, code: string, failed: Failed): void {
    if (codeMatches(challenge, code)) return;
    challenge.failCount = (challenge.failCount ?? 0) + 1;
    if (challenge.failCount < MAX_FAILED_ATTEMPTS) throw failed("Invalid code.");
    this.bySecret.delete(challenge.secret);
    throw failed("Invalid code. Too many wrong codes: this code is void; request a new one.");
  }

  /** Challenges expired more than `PURGE_AFTER_MS` ago: no answer needs them any more. */
  private purge(): void {
    const before = this.clock.now() - PURGE_AFTER_MS;
    for (const [secret, challenge] of this.bySecret) if (challenge.expiresAt <= before) this.bySecret.delete(secret);
  }

  // ---- persistence ----

  save(): ChallengeRecord[] {
    return [...this.bySecret.values()];
  }

  load(challenges: ChallengeRecord[]): void {
    this.bySecret = new Map(challenges.map((c) => [c.secret, c]));
  }
}
