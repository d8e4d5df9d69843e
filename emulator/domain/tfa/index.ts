import {
  AuthorizeNewMethodRequest,
  ConfirmAuthorizationRequest,
  ConfirmNewMethodRequest,
  RegenBackupCodesRequest,
  RemoveMethodRequest,
  SendSmsCodeRequest,
  TfaLoginRequest,
  UpdateMethodRequest,
} from "../../../sdk/schemas/tfa";
import type { ApiKeyRecord, UserRecord } from "../records";
import { Persistent } from "../persistence";
import { AuthorizationRecord, Authorizations } from "./authorizations";
import { BackupCodeRecord, BackupCodes } from "./backup-codes";
import { ChallengeRecord, Challenges } from "./challenges";
import * as changes from "./changes";
import * as enrolment from "./enrolment";
import { TfaFaults } from "./faults";
import { MethodRecord, Methods, tfaEnabled } from "./methods";
import { Outbox } from "./outbox";
import { TfaDeps, TfaParts } from "./parts";
import * as sending from "./sending";
import * as sessions from "./sessions";
import { SmsLog, SmsSend } from "./sms";
import { totpSetup } from "./totp";

/*
 * Two-factor authentication: methods (SMS, TOTP), email codes, backup codes, challenges, the add-method
 * authorization window and per-method lockout. Rules and constants are documented in emulator/TFA.md.
 *
 * `Tfa` is the facade the HTTP layer and the marketplace use: it owns one store per kind of record (methods.ts,
 * challenges.ts, backup-codes.ts, authorizations.ts, sms.ts) and hands them to the rules (sessions.ts,
 * sending.ts, enrolment.ts, changes.ts, all through verification.ts).
 */

export {
  AUTHORIZATION_WINDOW_MS,
  BACKUP_CODE_COUNT,
  CHALLENGE_TTL_MS,
  LOCKOUT_MS,
  MAX_FAILED_ATTEMPTS,
  PREAUTH_PHONE_CAP,
  PREAUTH_PHONE_WINDOW_MS,
  PURGE_AFTER_MS,
  SESSION_TTL_MS,
  SMS_RATE_LIMIT,
  SMS_RATE_WINDOW_MS,
  SMS_RESEND_INTERVAL_MS,
  TOTP_DRIFT_STEPS,
  TOTP_SECRET_BYTES,
} from "./constants";
export { RESERVED_NUMBERS } from "./sms";
export { maskPhone, seconds } from "./methods";
export { Outbox } from "./outbox";
export type { AuthorizationRecord, BackupCodeRecord, ChallengeRecord, MethodRecord, TfaDeps, TfaFaults };
export type { Channel, MethodType } from "./channels";
export type { OutboxMessage } from "./outbox";

/** The saved 2FA state (the outbox is never saved). Its shape is the state file's: keep it stable. */
/** A user's 2FA as `GET /api/v0/tfa/status/` reports it. */
export interface TfaStatus {
  enabled: boolean;
  methods: MethodRecord[];
  backupCodesRemaining: number;
  newMethodAuthorized: boolean;
}

export interface TfaSnapshot {
  nextMethodId: number;
  methods: MethodRecord[];
  challenges: ChallengeRecord[];
  backupCodes: BackupCodeRecord[];
  authorizations: AuthorizationRecord[];
  smsLog: SmsSend[];
}

export class Tfa implements Persistent<TfaSnapshot> {
  readonly outbox = new Outbox();
  readonly faults: TfaFaults = { serviceUnavailable: 0, challengeCreationFailed: 0 };
  private readonly parts: TfaParts;

  constructor(deps: TfaDeps) {
    const { clock, random } = deps;
    this.parts = {
      ...deps,
      methods: new Methods(clock),
      challenges: new Challenges(clock, random),
      backupCodes: new BackupCodes(clock, random),
      authorizations: new Authorizations(clock, this.faults),
      smsLog: new SmsLog(),
      outbox: this.outbox,
      faults: this.faults,
    };
  }

  // ---- callers and login ----

  caller(bearer: UserRecord | undefined, secret: string | undefined): UserRecord {
    return sessions.caller(this.parts, bearer, secret);
  }

  beginLogin(user: UserRecord): string {
    return sessions.beginLogin(this.parts, user);
  }

  login(user: UserRecord, request: TfaLoginRequest, presented: ApiKeyRecord | undefined) {
    return sessions.login(this.parts, user, request, presented);
  }

  // ---- status ----

  status(user: UserRecord): TfaStatus {
    return {
      enabled: tfaEnabled(user),
      methods: this.methodsOf(user).map((m) => this.current(m)),
      backupCodesRemaining: this.parts.backupCodes.active(user).length,
      newMethodAuthorized: this.parts.authorizations.authorized(user),
    };
  }

  /** The method as it stands now (an expired lock lifted). */
  current(method: MethodRecord): MethodRecord {
    return this.parts.methods.current(method);
  }

  methodsOf(user: UserRecord): MethodRecord[] {
    return this.parts.methods.of(user);
  }

  // ---- sending codes ----

  sendEmailCode(user: UserRecord, secret?: string): ChallengeRecord {
    return sending.sendEmailCode(this.parts, user, secret);
  }

  sendSmsCode(user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
    return sending.sendSmsCode(this.parts, user, request);
  }

  resendSmsCode(user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
    return sending.resendSmsCode(this.parts, user, request);
  }

  // ---- adding a method ----

  authorizeNewMethod(user: UserRecord, request: AuthorizeNewMethodRequest): { secret?: string } {
    return enrolment.authorizeNewMethod(this.parts, user, request);
  }

  confirmAuthorization(user: UserRecord, request: ConfirmAuthorizationRequest): void {
    enrolment.confirmAuthorization(this.parts, user, request);
  }

  totpSetup(user: UserRecord) {
    return totpSetup(this.parts.random, user);
  }

  confirmNewMethod(user: UserRecord, request: ConfirmNewMethodRequest, deprecatedPath = false) {
    return enrolment.confirmNewMethod(this.parts, user, request, deprecatedPath);
  }

  // ---- changing methods and codes ----

  removeMethod(user: UserRecord, request: RemoveMethodRequest): { remaining: number } {
    return changes.removeMethod(this.parts, user, request);
  }

  updateMethod(user: UserRecord, request: UpdateMethodRequest): MethodRecord {
    return changes.updateMethod(this.parts, user, request);
  }

  regenerateBackupCodes(user: UserRecord, request: RegenBackupCodesRequest): string[] {
    return changes.regenerateBackupCodes(this.parts, user, request);
  }

  // ---- emulator controls ----

  makeLegacy(user: UserRecord): void {
    changes.makeLegacy(this.parts, user);
  }

  loseTotpSecret(methodId: number): void {
    this.parts.methods.loseTotpSecret(methodId);
  }

  // ---- persistence ----

  snapshot(): TfaSnapshot {
    const { methods, challenges, backupCodes, authorizations, smsLog } = this.parts;
    return structuredClone({
      ...methods.save(),
      challenges: challenges.save(),
      backupCodes: backupCodes.save(),
      authorizations: authorizations.save(),
      smsLog: smsLog.save(),
    });
  }

  restore(data: TfaSnapshot): void {
    const copy = structuredClone(data);
    const { methods, challenges, backupCodes, authorizations, smsLog } = this.parts;
    methods.load(copy);
    challenges.load(copy.challenges);
    backupCodes.load(copy.backupCodes);
    authorizations.load(copy.authorizations);
    smsLog.load(copy.smsLog);
  }
}
