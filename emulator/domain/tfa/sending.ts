import { SendSmsCodeRequest } from "../../../sdk/schemas/tfa";
import type { UserRecord } from "../records";
import { ServiceError, badRequest, forbidden } from "../errors";
import { ChallengeRecord } from "./challenges";
import { SECOND, SMS_RESEND_INTERVAL_MS } from "./constants";
import { TfaParts } from "./parts";

/*
 * Sending codes by SMS and email: the public send and resend calls, and the sending rules the add-method flow
 * shares with them. A code goes to the outbox; only its hash is kept on the challenge.
 */

/** Where an SMS goes, and the method it proves when the number is one. */
export interface SmsTarget {
  phoneNumber: string;
  methodId?: number;
}

/** `POST /tfa/email/`: a code by email, on the given (still valid) challenge or a new one. */
export function sendEmailCode(tfa: TfaParts, user: UserRecord, secret?: string): ChallengeRecord {
  return sendEmail(tfa, user, secret === undefined ? undefined : tfa.challenges.reusable(user, secret));
}

/** `POST /tfa/sms/` (and deprecated `/tfa/test/`). */
export function sendSmsCode(tfa: TfaParts, user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
  const existing = request.secret === undefined ? undefined : tfa.challenges.reusable(user, request.secret);
  const target = smsTarget(tfa, user, request);
  if (tfa.challenges.liveSms(user, target.phoneNumber)) {
    throw badRequest("tfa_challenge_exists", "A code was sent to this number recently and is still valid; use resend.");
  }
  return sendSms(tfa, user, target, existing, { adminExempt: true });
}

/** `POST /tfa/sms/resend/` (and deprecated `/tfa/resend/`): a new code for an earlier SMS challenge. */
export function resendSmsCode(tfa: TfaParts, user: UserRecord, request: SendSmsCodeRequest): ChallengeRecord {
  const original = request.secret !== undefined ? tfa.challenges.own(user, request.secret) : tfa.challenges.latestSms(user);
  if (!original || original.channel !== "sms") throw badRequest("no_challenge_found", "No SMS code was sent in this context; send one first.");
  const phone = request.tfa_method_id !== undefined ? tfa.methods.own(user, request.tfa_method_id, "sms").phoneNumber : request.phone_number;
  if (phone !== undefined && phone !== original.phoneNumber) {
    throw badRequest("phone_number_mismatch", "The phone number differs from the one the code was sent to.");
  }
  const waitMs = original.sentAt! + SMS_RESEND_INTERVAL_MS - tfa.clock.now();
  if (waitMs > 0) throw new ServiceError("rate_limited", "sms_rate_limited", `Wait ${Math.ceil(waitMs / SECOND)} s before asking for another code.`);
  // With a secret the same challenge gets the new code; without one (bearer) a new secret replaces the old.
  const reuse = request.secret !== undefined ? original : undefined;
  const target = { phoneNumber: original.phoneNumber!, methodId: original.methodId };
  const sent = sendSms(tfa, user, target, reuse, { adminExempt: true, resend: true });
  if (!reuse) tfa.challenges.delete(original.secret);
  return sent;
}

export function sendEmail(tfa: TfaParts, user: UserRecord, existing?: ChallengeRecord): ChallengeRecord {
  if (!user.email) throw badRequest("missing_email", "The account has no email address.");
  requireVerifiedEmail(user);
  const { challenge, code } = tfa.challenges.issueCode(user, { channel: "email", phoneNumber: undefined, methodId: undefined }, existing);
  deliver(tfa, user, "email", user.email, code);
  return challenge;
}

/** Sends an SMS code after the account and number rules, then through the (emulated) provider. */
export function sendSms(
  tfa: TfaParts,
  user: UserRecord,
  target: SmsTarget,
  existing: ChallengeRecord | undefined,
  options: { adminExempt: boolean; resend?: boolean },
): ChallengeRecord {
  if (!(options.adminExempt && user.isAdmin)) requireVerifiedEmail(user);
  if (user.smsFraud) throw forbidden("sms_fraud_detected", "SMS is disabled on this account until support clears it.");
  // A first code to a number that is none of the user's is an attempt to add it; a resend is the same attempt.
  const preauth = !options.resend && target.methodId === undefined && target.phoneNumber !== user.phoneNumber;
  const send = { userId: user.id, phoneNumber: target.phoneNumber, at: tfa.clock.now(), preauth };
  tfa.smsLog.admit(send);
  const { challenge, code } = tfa.challenges.issueCode(user, { channel: "sms", ...target }, existing);
  tfa.smsLog.record(send);
  deliver(tfa, user, "sms", target.phoneNumber, code);
  return challenge;
}

function deliver(tfa: TfaParts, user: UserRecord, channel: "sms" | "email", to: string, code: string): void {
  const text = `Your GPU Rental verification code is ${code}. It expires in 10 minutes.`;
  tfa.outbox.push({ channel, to, userId: user.id, code, text, sentAt: tfa.clock.now() });
}

function requireVerifiedEmail(user: UserRecord): void {
  if (!user.emailVerified) throw badRequest("email_not_verified", "Verify your account's email address before using 2FA codes.");
}

/** Where an SMS goes: the given method's number, a given number, or the number on file (else the primary method's). */
function smsTarget(tfa: TfaParts, user: UserRecord, request: SendSmsCodeRequest): SmsTarget {
  if (request.tfa_method_id !== undefined) {
    const method = tfa.methods.own(user, request.tfa_method_id, "sms");
    if (request.phone_number !== undefined && request.phone_number !== method.phoneNumber) {
      throw badRequest("phone_number_mismatch", "The phone number differs from the method's.");
    }
    return { phoneNumber: method.phoneNumber!, methodId: method.id };
  }
  const sms = tfa.methods.of(user).filter((m) => m.method === "sms");
  const phoneNumber = request.phone_number ?? user.phoneNumber ?? (sms.find((m) => m.isPrimary) ?? sms[0])?.phoneNumber;
  if (!phoneNumber) throw badRequest("missing_phone_number", "Send phone_number: the account has no number on file.");
  return { phoneNumber, methodId: sms.find((m) => m.phoneNumber === phoneNumber)?.id };
}
