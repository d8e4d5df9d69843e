import { base32Decode, base32Encode, totp, totpProvisioningUri, totpStep } from "../../../sdk/tfa";
import type { UserRecord } from "../records";
import { badRequest } from "../errors";
import { Random } from "../random";
import { SECOND, TOTP_DRIFT_STEPS, TOTP_SECRET_BYTES } from "./constants";
import { MethodRecord } from "./methods";

/* Authenticator apps (RFC 6238): the code arithmetic itself is the SDK's (`sdk/tfa.ts`), shared with clients. */

/** The step whose code `code` is, within the drift allowed, or undefined. */
export function matchTotp(secret: string, code: string, nowMs: number): number | undefined {
  const now = totpStep(nowMs);
  for (let step = now - TOTP_DRIFT_STEPS; step <= now + TOTP_DRIFT_STEPS; step++) {
    if (totp(secret, step * 30 * SECOND) === code) return step;
  }
  return undefined;
}

/** `POST /tfa/totp-setup/`: a fresh secret for an authenticator app; nothing is stored until confirm-new. */
export function totpSetup(random: Random, user: UserRecord) {
  const bytes = Uint8Array.from({ length: TOTP_SECRET_BYTES }, () => random.int(0, 255));
  const secret = base32Encode(bytes);
  return { secret, provisioning_uri: totpProvisioningUri(secret, user.email || user.username) };
}

/** The fields of a new TOTP method, once its app showed a valid `code` for `secret` (that code is then spent). */
export function newTotpSecret(secret: string, code: string, nowMs: number): Pick<MethodRecord, "totpSecret" | "lastTotpStep"> {
  let step: number | undefined;
  try {
    // At least 80 bits, as RFC 4226 requires of a shared secret.
    if (base32Decode(secret).length < 10) throw new Error("too short");
    step = matchTotp(secret, code, nowMs);
  } catch {
    throw badRequest("bad_request", "secret is not a base32 TOTP secret of at least 80 bits (use the one totp-setup returned).");
  }
  if (step === undefined) throw badRequest("2fa_verification_failed", "Invalid code for this secret.");
  return { totpSecret: secret.replace(/[\s=]/g, "").toUpperCase(), lastTotpStep: step };
}
