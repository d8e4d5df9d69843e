/**
 * A refusal by the service's rules. The domain says what went wrong in the service's own words (an `error` code
 * and a `msg`); the HTTP layer turns `kind` into a status.
 */
export type ErrorKind =
  /** Answered 200 with `success: false`: a refusal the service reports without an error status (a low bid may be). */
  | "declined"
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  /** 409: what the request would make exists already (a subaccount's email). */
  | "conflict"
  | "gone"
  /** 411: the service's answer to a prepayment above the account's credit. */
  | "length_required"
  | "rate_limited"
  | "unavailable"
  /** 500: the service failed on its side (2FA `challenge_creation_failed`). */
  | "internal";

export class ServiceError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, msg: string, extra?: Record<string, unknown>) =>
  new ServiceError("bad_request", code, msg, extra);
export const notFound = (code: string, msg: string) => new ServiceError("not_found", code, msg);
export const forbidden = (code: string, msg: string) => new ServiceError("forbidden", code, msg);
export const unauthorized = (code: string, msg: string) => new ServiceError("unauthorized", code, msg);
