/*
 * The named limits of 2FA. emulator/TFA.md lists each with its source: "spec" when the API documentation gives
 * it, "chosen" when the documentation only shows that a limit exists.
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

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
