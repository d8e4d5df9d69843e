/**
 * Typed errors of the SDK. Every error of the service carries its HTTP status, the service's `error` code and
 * its `msg`, plus the request that failed, so a user sees what failed, why, and what to do.
 */
export interface RequestInfo {
  method: string;
  path: string;
}

/** What an error knows beyond its message: one object, so no argument is ever a placeholder. */
export interface ErrorDetails {
  /** The HTTP status of the answer. */
  status?: number;
  /** The service's `error` code (`no_such_ask`, `invalid_args`, ...). */
  code?: string;
  /** The service's `msg`, as it sent it. */
  serviceMessage?: string;
  /** The request that failed. */
  request?: RequestInfo;
  /** The error this one stands for. */
  cause?: unknown;
  /**
   * The `new_contract` of a refusal that made an instance all the same (the live service answers a bid below
   * the minimum so: the instance exists, stopped, and bills storage). See sdk/instances.ts, strayInstance.
   */
  newContract?: number;
}

export class GpuRentalError extends Error {
  override name = "GpuRentalError";
  readonly status?: number;
  readonly code?: string;
  readonly serviceMessage?: string;
  readonly request?: RequestInfo;
  /** The instance the service made although it refused (its answer's `new_contract`), if any. */
  readonly newContract?: number;
  /** What became of that instance: `destroyed` (nothing is left billing), or `left` when destroying it failed too. */
  strayInstance?: { id: number; outcome: "destroyed" | "left" };

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code;
    this.serviceMessage = details.serviceMessage;
    this.request = details.request;
    this.newContract = details.newContract;
  }
}

/** The service's part of an error (status, `error`, `msg`, request), for an error that stands for it. */
export function serviceDetails(error: GpuRentalError | undefined): ErrorDetails {
  return error
    ? { status: error.status, code: error.code, serviceMessage: error.serviceMessage, request: error.request, newContract: error.newContract, cause: error }
    : {};
}

/** 400: the request was refused as invalid (`invalid_args`, `invalid_price`, `bad_request`, ...). */
export class BadRequestError extends GpuRentalError {
  override name = "BadRequestError";
}
/**
 * The key is missing, unknown, revoked, or lacks the permission: 401/403, or `auth_error` at any status (the live
 * service answers an unknown key with 404 `auth_error` on some endpoints).
 */
export class UnauthorizedError extends GpuRentalError {
  override name = "UnauthorizedError";
}
/** 404 that is not about an offer. */
export class NotFoundError extends GpuRentalError {
  override name = "NotFoundError";
}
/** 404/410 `no_such_ask`: the offer does not exist or was rented by someone else first. */
export class OfferUnavailableError extends GpuRentalError {
  override name = "OfferUnavailableError";
}
/** 429: too many requests; `retryAfterMs` is the server's `Retry-After`, when it sent one. */
export class RateLimitedError extends GpuRentalError {
  override name = "RateLimitedError";
  retryAfterMs?: number;
}
/**
 * 429 `search_quota_exceeded`: the key's daily quota of offer search is spent. Not transient: it resets at
 * midnight UTC (`resetsAt`, from `X-RateLimit-Reset`), and every search before then only burns more of it, so
 * nothing retries it and a rental that meets it stops at once.
 */
export class SearchQuotaExceededError extends RateLimitedError {
  override name = "SearchQuotaExceededError";
  resetsAt?: Date;
}
/** 5xx. */
/** More than the account's credit was asked for (a prepayment, a transfer): add credit, or ask for less. */
export class InsufficientCreditError extends GpuRentalError {
  override name = "InsufficientCreditError";
}

export class ServerError extends GpuRentalError {
  override name = "ServerError";
}
/** The connection failed or was reset before a response arrived. */
export class NetworkError extends GpuRentalError {
  override name = "NetworkError";
}
/** The service answered 2xx with a body that does not match the wire schema. */
export class ResponseValidationError extends GpuRentalError {
  override name = "ResponseValidationError";
}
/**
 * Network volumes are not generally released on the service (its own client hides them as "not yet released",
 * and the vendor withdrew their documentation in May 2026): an account without the feature is refused on their
 * endpoints. This error names that, rather than a bare 403 or 404; `cause` is the service's answer.
 */
export class NetworkVolumesUnavailableError extends GpuRentalError {
  override name = "NetworkVolumesUnavailableError";
  constructor(cause: GpuRentalError) {
    super(
      `Network volumes are not available to this account: the service refused ${cause.request ? `${cause.request.method} ${cause.request.path}` : "the call"} ` +
        `(${cause.status ?? "?"}${cause.code ? ` ${cause.code}` : ""}: ${cause.serviceMessage ?? "no message"}). Network volumes are not generally ` +
        "released on the service: ask its support to enable them for the account, or use a local volume (an instance's volume, made on its own machine) instead.",
      serviceDetails(cause),
    );
  }
}

/** The SDK was not told where the service is or which key to use. */
export class ConfigurationError extends GpuRentalError {
  override name = "ConfigurationError";
}

/**
 * A listing that failed, answered `success: false` (at any status, 200 included) or could not be read. It is
 * never taken for an empty listing: what the account holds is unknown, so nothing may be rented again, swept
 * or totalled on it. `cause` is the error of the failed page.
 */
export class ListingError extends GpuRentalError {
  override name = "ListingError";
  constructor(
    /** What was listed, and where: `the instance listing (GET /api/v1/instances/)`. */
    readonly listing: string,
    override readonly cause: GpuRentalError,
  ) {
    super(`${listing} failed: ${cause.message}. What the account holds is unknown: this is not an empty listing.`, serviceDetails(cause));
  }
}

/**
 * 429s that a quick retry cannot clear: a locked 2FA method, an hourly SMS quota, a capped phone number, a team
 * invitation sent again within 5 minutes. The
 * caller has to wait or change something, so they are reported at once.
 */
const LASTING_LIMITS: readonly string[] = ["tfa_locked", "sms_rate_limited", "preauth_phone_cap", "twilio_rate_limited", "invitation_already_sent"];

/** Errors worth another try of the same request: they say nothing about the request itself. */
export function isTransient(error: unknown): boolean {
  if (error instanceof SearchQuotaExceededError) return false;
  if (error instanceof RateLimitedError) return !LASTING_LIMITS.includes(error.code ?? "");
  return error instanceof ServerError || error instanceof NetworkError;
}

/** Codes that say what failed whatever the status they come with: the body is read before the status. */
const ERRORS_BY_CODE: Readonly<Record<string, typeof GpuRentalError>> = {
  no_such_ask: OfferUnavailableError,
  // An unknown key is 404 `auth_error` on some live endpoints: an authentication failure, never "not found".
  auth_error: UnauthorizedError,
  search_quota_exceeded: SearchQuotaExceededError,
  // A refusal of the request itself, also when answered at 200 with `success: false` (a bid below the minimum).
  invalid_args: BadRequestError,
  invalid_price: BadRequestError,
  // An environment variable the account does not have: 400 on the live service, but what is missing is the key.
  nonexistent_key: NotFoundError,
  // A price increase decided already: 404 today, 409 from older backends (the public client takes both).
  no_pending_price_increase: NotFoundError,
  // A prepayment above the credit (411 on the live service) and a transfer above it (400).
  insufficient_credit: InsufficientCreditError,
  insufficient_balance: InsufficientCreditError,
};

/** The error type of an answer: by the service's `error` code first, then by the status. */
export function errorForStatus(status: number, code: string | undefined): typeof GpuRentalError {
  const byCode = code === undefined || !Object.hasOwn(ERRORS_BY_CODE, code) ? undefined : ERRORS_BY_CODE[code];
  if (byCode) return byCode;
  if (status === 400 || status === 422) return BadRequestError;
  if (status === 401 || status === 403) return UnauthorizedError;
  if (status === 404 || status === 410) return NotFoundError;
  if (status === 429) return RateLimitedError;
  if (status === 411) return InsufficientCreditError;
  if (status >= 500) return ServerError;
  return GpuRentalError;
}

/** Runs a read; a thing gone (404) reads as null, the one convention for "not found" across kinds. */
export async function foundOrNull<T>(read: () => Promise<T | null | undefined>): Promise<T | null> {
  try {
    return (await read()) ?? null;
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/** Runs a deletion; a thing already gone (404) counts as deleted. */
export async function deletedOrGone(remove: () => Promise<unknown>): Promise<void> {
  try {
    await remove();
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}
