import { AuthorizeNewMethodRequest, ConfirmAuthorizationRequest, ConfirmNewMethodRequest } from "../../../sdk/schemas/tfa";
import type { UserRecord } from "../records";
import { badRequest, notFound } from "../errors";
import { challengeCreationFailed } from "./challenges";
import { Channel, channelOf, methodType } from "./channels";
import { takeFault } from "./faults";
import { FactorFields, MethodRecord, smsLabel } from "./methods";
import { TfaParts } from "./parts";
import { sendEmail, sendSms } from "./sending";
import { newTotpSecret } from "./totp";
import { failure } from "./failures";
import { verify } from "./verification";

/*
 * Adding a method: authorize-new-method proves a second factor (POST, then PUT with the code) and opens the
 * window; confirm-new adds an SMS or TOTP method inside it. A user with no method proves it by email.
 */

/** `POST /tfa/authorize-new-method/`: a code sent (or expected from TOTP), or the window granted by a backup code. */
export function authorizeNewMethod(tfa: TfaParts, user: UserRecord, request: AuthorizeNewMethodRequest): { secret?: string } {
  if (request.backup_code) {
    tfa.backupCodes.use(user, request.backup_code);
    tfa.authorizations.grant(user);
    return {};
  }
  const { channel, method } = authorizingFactor(tfa, user, request);
  if (takeFault(tfa.faults, "challengeCreationFailed")) throw challengeCreationFailed();
  const challenge =
    channel === "email"
      ? sendEmail(tfa, user)
      : channel === "sms"
        ? sendSms(tfa, user, { phoneNumber: method!.phoneNumber!, methodId: method!.id }, undefined, { adminExempt: false })
        : tfa.challenges.create(user, { channel: "none", methodId: method!.id });
  tfa.authorizations.setPending(user, { secret: challenge.secret, channel, methodId: method?.id });
  return { secret: challenge.secret };
}

/** `PUT /tfa/authorize-new-method/`: the code of the pending authorization opens the 30-minute window. */
export function confirmAuthorization(tfa: TfaParts, user: UserRecord, request: ConfirmAuthorizationRequest): void {
  const { code, secret } = codeAndSecret(request);
  const pending = tfa.authorizations.pending(user);
  if (!pending) throw badRequest("no_pending_authorization", "No authorization is pending; start with POST authorize-new-method.");
  // Gone when voided by wrong codes, replaced by a resend, or purged long after expiring.
  const challenge = tfa.challenges.get(pending.secret);
  if (pending.secret !== secret || !challenge) throw badRequest("challenge_not_found", "No challenge matches the secret.");
  tfa.challenges.ensureLive(challenge);
  verify(tfa, user, { tfa_method: pending.channel, code, secret: pending.secret, tfa_method_id: pending.methodId }, "verify");
  tfa.challenges.delete(pending.secret);
  tfa.authorizations.grant(user);
}

/**
 * `POST /tfa/confirm-new/` (and deprecated `/tfa/test-submit/`, where a legacy account is told to migrate
 * first): adds an SMS or TOTP method inside the authorization window. The first method brings backup codes.
 */
export function confirmNewMethod(tfa: TfaParts, user: UserRecord, request: ConfirmNewMethodRequest, deprecatedPath = false) {
  if (deprecatedPath && user.tfaStatus === "legacy") {
    throw badRequest("untracked_2fa_found", "This account has legacy 2FA; regenerate backup codes first to migrate it.");
  }
  const type = methodType(request.tfa_method);
  const { code, secret } = codeAndSecret(request);
  tfa.authorizations.require(user);
  const factor = type === "totp" ? newTotpFields(tfa, user, secret, code) : newSmsFields(tfa, user, request, code, secret);
  const first = tfa.methods.of(user).length === 0;
  const label = request.label ?? (type === "sms" ? smsLabel(factor.phoneNumber!) : "Authenticator app");
  const method = tfa.methods.add({ userId: user.id, method: type, label, isPrimary: first }, factor);
  user.tfaStatus = "enabled";
  return { method, backupCodes: first ? tfa.backupCodes.replace(user) : undefined };
}

/** Both steps that check a code name its challenge too. */
function codeAndSecret(request: { code?: string; secret?: string }): { code: string; secret: string } {
  if (!request.code || !request.secret) throw badRequest("missing_params", "Send both code and secret.");
  return { code: request.code, secret: request.secret };
}

/** What proves the caller may add a method: a user with no methods is forced to email. */
function authorizingFactor(tfa: TfaParts, user: UserRecord, request: AuthorizeNewMethodRequest): { channel: Channel; method?: MethodRecord } {
  const methods = tfa.methods.of(user);
  if (methods.length === 0) return { channel: "email" };
  if (request.tfa_method_id !== undefined) {
    const method = tfa.methods.own(user, request.tfa_method_id, request.tfa_method === undefined ? undefined : methodType(request.tfa_method));
    return { channel: method.method, method };
  }
  if (request.tfa_method === undefined) {
    if (methods.length > 1) throw badRequest("bad_request", "Send tfa_method (or tfa_method_id): you have several methods.");
    return { channel: methods[0].method, method: methods[0] };
  }
  const channel = channelOf(request.tfa_method);
  if (channel === "email") return { channel };
  const method = tfa.methods.find(user, channel, undefined);
  if (!method) throw notFound("not_found", `No ${channel} method is configured.`);
  return { channel, method };
}

/** One authenticator app per user; its first code proves the app holds the secret. */
function newTotpFields(tfa: TfaParts, user: UserRecord, secret: string, code: string): FactorFields {
  if (tfa.methods.of(user).some((m) => m.method === "totp")) throw badRequest("duplicate_tfa_method", "An authenticator app (TOTP) method is already configured.");
  return newTotpSecret(secret, code, tfa.clock.now());
}

/** A new number proves itself with the code sent to it (POST /tfa/sms/ with that number). */
function newSmsFields(tfa: TfaParts, user: UserRecord, request: ConfirmNewMethodRequest, code: string, secret: string): FactorFields {
  const phoneNumber = request.phone_number;
  if (!phoneNumber) throw badRequest("missing_phone_number", "Send phone_number for an SMS method.");
  if (tfa.methods.of(user).some((m) => m.method === "sms" && m.phoneNumber === phoneNumber)) {
    throw badRequest("duplicate_tfa_method", "This phone number is already an SMS method.");
  }
  const challenge = tfa.challenges.forCode(user, secret, "sms");
  if (challenge.phoneNumber !== phoneNumber) throw badRequest("phone_number_mismatch", "The code was sent to another number.");
  tfa.challenges.ensureLive(challenge);
  tfa.challenges.checkCode(challenge, code, failure("verify"));
  tfa.challenges.delete(challenge.secret);
  return { phoneNumber };
}
