import { ServiceError, badRequest } from "../errors";

/*
 * How a failed verification of a second factor is told: by ./verification.ts, and by the methods and challenges
 * whose codes it checks.
 */

/** Verification failures: at login they are `2fa_login_failed`, elsewhere `2fa_verification_failed`. */
export type Context = "login" | "verify";

/** Makes the error of a failed verification (its code depends on the context). */
export type Failed = (msg: string, extra?: Record<string, unknown>) => ServiceError;

export function failure(context: Context): Failed {
  return (msg, extra) => badRequest(context === "login" ? "2fa_login_failed" : "2fa_verification_failed", msg, extra);
}
