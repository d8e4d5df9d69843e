import { TfaLoginRequest } from "../../../sdk/schemas/tfa";
import type { UserRecord } from "../records";
import { badRequest } from "../errors";
import { Context, Failed, failure } from "./failures";
import { ChallengeRecord, codeMatches } from "./challenges";
import { Channel, channelOf } from "./channels";
import { MethodRecord } from "./methods";
import { TfaParts } from "./parts";
import { matchTotp } from "./totp";

/*
 * Verifying a second factor: the one mechanism behind login, remove, regenerate and the authorize confirm step,
 * so the lockout and the spending of codes work the same everywhere.
 */

/** What a proof of a second factor verified: a stored method, an email or legacy-SMS code, or a backup code. */
export interface Verified {
  channel: Channel | "backup";
  method?: MethodRecord;
}

/** The proof fields shared by login, remove, regenerate and the authorize confirm step. */
export type Proof = Pick<TfaLoginRequest, "tfa_method" | "code" | "secret" | "tfa_method_id" | "backup_code">;

/** Checks the proof and spends what it used (the backup code, the challenge, the TOTP step). */
export function verify(tfa: TfaParts, user: UserRecord, proof: Proof, context: Context): Verified {
  const failed = failure(context);
  if (proof.backup_code) {
    tfa.backupCodes.use(user, proof.backup_code);
    return { channel: "backup" };
  }
  const channel = channelOf(proof.tfa_method ?? "sms");
  if (!proof.code) throw badRequest("missing_auth_value", "Send code (or backup_code).");
  if (channel === "totp") return verifyTotp(tfa, user, proof.code, proof.tfa_method_id, failed);
  if (!proof.secret) throw badRequest("missing_params", `A ${channel} code needs the secret its sending returned.`);
  const challenge = tfa.challenges.forCode(user, proof.secret, channel);
  const method = channel === "sms" ? smsMethodFor(tfa, user, challenge, proof.tfa_method_id) : undefined;
  if (channel === "sms" && !method) ensureLegacyNumber(user, challenge, failed);
  if (method) tfa.methods.ensureUnlocked(method);
  tfa.challenges.ensureLive(challenge);
  // A method counts the failures toward its lockout; without one (email, legacy SMS) the challenge does.
  if (method) tfa.methods.attempt(method, codeMatches(challenge, proof.code), failed);
  else tfa.challenges.checkCode(challenge, proof.code, failed);
  tfa.challenges.delete(challenge.secret);
  return { channel, method };
}

/** The SMS method a code was verified against: named by id, by the challenge, or by the challenge's number. */
function smsMethodFor(tfa: TfaParts, user: UserRecord, challenge: ChallengeRecord, id: number | undefined): MethodRecord | undefined {
  const method =
    id !== undefined
      ? tfa.methods.own(user, id, "sms")
      : challenge.methodId !== undefined
        ? tfa.methods.get(challenge.methodId)
        : tfa.methods.of(user).find((m) => m.method === "sms" && m.phoneNumber === challenge.phoneNumber);
  if (method && method.phoneNumber !== challenge.phoneNumber) {
    throw badRequest("phone_number_mismatch", "The code was sent to another number than this method's.");
  }
  return method;
}

/** Only a legacy account verifies SMS without a method row, and only a code sent to its number on file. */
function ensureLegacyNumber(user: UserRecord, challenge: ChallengeRecord, failed: Failed): void {
  if (user.tfaStatus !== "legacy") throw failed("The code was not sent to a configured SMS method.");
  if (challenge.phoneNumber !== user.phoneNumber) throw badRequest("phone_number_mismatch", "The code was sent to another number than the one on file.");
}

function verifyTotp(tfa: TfaParts, user: UserRecord, code: string, methodId: number | undefined, failed: Failed): Verified {
  const method = tfa.methods.find(user, "totp", methodId);
  if (!method) throw failed("No authenticator app (TOTP) method is configured.");
  if (!method.totpSecret) {
    throw badRequest("tfa_method_not_configured", "The authenticator method's secret is missing or cannot be decrypted; reconfigure 2FA.");
  }
  tfa.methods.ensureUnlocked(method);
  const step = matchTotp(method.totpSecret, code, tfa.clock.now());
  // A code is good once: a step at or before the last one accepted is a replay.
  const fresh = step !== undefined && step > (method.lastTotpStep ?? -1);
  tfa.methods.attempt(method, fresh, failed);
  method.lastTotpStep = step;
  return { channel: "totp", method };
}
