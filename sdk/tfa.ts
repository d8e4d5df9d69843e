import { createHmac } from "node:crypto";
import { z } from "zod";
import type { Caller } from "./call";
import { describeIssues } from "./schemas";
import { BadRequestError, GpuRentalError } from "./errors";
import {
  AuthorizeNewMethodRequest,
  AuthorizeNewMethodResponse,
  ConfirmAuthorizationRequest,
  ConfirmNewMethodRequest,
  ConfirmNewMethodResponse,
  RegenBackupCodesRequest,
  RegenBackupCodesResponse,
  RemoveMethodRequest,
  RemoveMethodResponse,
  SendCodeResponse,
  SendEmailCodeRequest,
  SendSmsCodeRequest,
  TfaLoginRequest,
  TfaLoginResponse,
  TfaMessageResponse,
  TfaStatusResponse,
  TotpSetupResponse,
  UpdateMethodRequest,
  UpdateMethodResponse,
} from "./schemas/tfa";

// ---- TOTP (RFC 6238 over RFC 4226 HOTP), so no extra dependency is needed ----

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
export type TotpAlgorithm = "sha1" | "sha256" | "sha512";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 without padding, as authenticator apps take secrets. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case, spaces and padding ignored); throws on any other character. */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, "").toUpperCase();
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not a base32 character: ${JSON.stringify(char)}`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** RFC 4226: the HMAC of the 8-byte counter, dynamically truncated to `digits` decimal digits. */
export function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS, algorithm: TotpAlgorithm = "sha1"): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(message).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

export interface TotpOptions {
  digits?: number;
  stepSeconds?: number;
  algorithm?: TotpAlgorithm;
}

/** The time step a moment falls in. */
export function totpStep(timeMs: number, stepSeconds = TOTP_STEP_SECONDS): number {
  return Math.floor(timeMs / 1000 / stepSeconds);
}

/** RFC 6238: the code of a base32 `secret` at `timeMs` (default now). 30 s steps, 6 digits, HMAC-SHA1 by default. */
export function totp(secret: string, timeMs = Date.now(), options: TotpOptions = {}): string {
  const step = totpStep(timeMs, options.stepSeconds);
  return hotp(base32Decode(secret), step, options.digits, options.algorithm);
}

/** The `otpauth://` URI an authenticator app imports (usually as a QR code). */
export function totpProvisioningUri(secret: string, account: string, issuer = "GPU Rental"): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  const query = new URLSearchParams({ secret, issuer, algorithm: "SHA1", digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${label}?${query.toString()}`;
}

// ---- endpoints ----

/** Validates the request with the wire schema before sending it, then validates the response. */
async function tfaCall<S extends z.ZodType>(
  client: Caller,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  schema: S,
  request?: { schema: z.ZodType; body: unknown },
): Promise<z.infer<S>> {
  let body: unknown = method === "GET" ? undefined : {};
  if (request) {
    const parsed = request.schema.safeParse(request.body);
    if (!parsed.success) {
      throw new BadRequestError(`Invalid ${method} ${path} request: ${describeIssues(parsed.error)}`, { code: "bad_request" });
    }
    body = parsed.data;
  }
  // 2FA calls send codes or spend them: a retry after an unknown outcome could send twice or count twice.
  return client.call({ method, path, schema, body, idempotent: method === "GET" });
}

const TFA = "/api/v0/tfa";

/** `GET /api/v0/tfa/status/`: methods, backup codes left, whether a new method may be added now. */
const tfaStatus = (client: Caller) => tfaCall(client, "GET", `${TFA}/status/`, TfaStatusResponse);

/** `POST /api/v0/tfa/`: completes a login; with an API key as bearer the body carries `session_key`. */
const completeTfaLogin = (client: Caller, request: TfaLoginRequest) =>
  tfaCall(client, "POST", `${TFA}/`, TfaLoginResponse, { schema: TfaLoginRequest, body: request });

/** `POST /api/v0/tfa/email/`: sends an email code; pass the returned `secret` back with the code. */
const sendEmailCode = (client: Caller, request: SendEmailCodeRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/email/`, SendCodeResponse, { schema: SendEmailCodeRequest, body: request });

/** `POST /api/v0/tfa/sms/`: sends an SMS code (to a method, a given number, or the number on file). */
const sendSmsCode = (client: Caller, request: SendSmsCodeRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/sms/`, SendCodeResponse, { schema: SendSmsCodeRequest, body: request });

/** `POST /api/v0/tfa/sms/resend/`: sends a new code for an earlier SMS challenge. */
const resendSmsCode = (client: Caller, request: SendSmsCodeRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/sms/resend/`, SendCodeResponse, { schema: SendSmsCodeRequest, body: request });

/** `POST /api/v0/tfa/totp-setup/`: a fresh base32 secret and its provisioning URI; adds no method. */
const setupTotp = (client: Caller) => tfaCall(client, "POST", `${TFA}/totp-setup/`, TotpSetupResponse);

/** `POST /api/v0/tfa/authorize-new-method/`: starts the authorization to add a method (or grants it with a backup code). */
const authorizeNewMethod = (client: Caller, request: AuthorizeNewMethodRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/authorize-new-method/`, AuthorizeNewMethodResponse, { schema: AuthorizeNewMethodRequest, body: request });

/** `PUT /api/v0/tfa/authorize-new-method/`: submits the code; grants the 30-minute add-method window. */
const confirmAuthorization = (client: Caller, request: ConfirmAuthorizationRequest) =>
  tfaCall(client, "PUT", `${TFA}/authorize-new-method/`, TfaMessageResponse, { schema: ConfirmAuthorizationRequest, body: request });

/** `POST /api/v0/tfa/confirm-new/`: adds an SMS or TOTP method; the first one returns the backup codes, once. */
const confirmNewMethod = (client: Caller, request: ConfirmNewMethodRequest) =>
  tfaCall(client, "POST", `${TFA}/confirm-new/`, ConfirmNewMethodResponse, { schema: ConfirmNewMethodRequest, body: request });

/** `DELETE /api/v0/tfa/`: removes a method; removing the last one disables 2FA. */
const removeTfaMethod = (client: Caller, request: RemoveMethodRequest) =>
  tfaCall(client, "DELETE", `${TFA}/`, RemoveMethodResponse, { schema: RemoveMethodRequest, body: request });

/** `PUT /api/v0/tfa/update/`: relabels a method or makes it primary. */
const updateTfaMethod = (client: Caller, request: UpdateMethodRequest) =>
  tfaCall(client, "PUT", `${TFA}/update/`, UpdateMethodResponse, { schema: UpdateMethodRequest, body: request });

/** `PUT /api/v0/tfa/regen-backup-codes/`: replaces all backup codes with 10 new ones (shown once). */
const regenerateBackupCodes = (client: Caller, request: RegenBackupCodesRequest) =>
  tfaCall(client, "PUT", `${TFA}/regen-backup-codes/`, RegenBackupCodesResponse, { schema: RegenBackupCodesRequest, body: request });

/** @deprecated `POST /api/v0/tfa/test/`; use `sendSmsCode`. */
const sendTestSms = (client: Caller, request: SendSmsCodeRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/test/`, SendCodeResponse, { schema: SendSmsCodeRequest, body: request });

/** @deprecated `POST /api/v0/tfa/test-submit/`; use `confirmNewMethod`. */
const submitTestCode = (client: Caller, request: ConfirmNewMethodRequest) =>
  tfaCall(client, "POST", `${TFA}/test-submit/`, ConfirmNewMethodResponse, { schema: ConfirmNewMethodRequest, body: request });

/** @deprecated `POST /api/v0/tfa/resend/`; use `resendSmsCode`. */
const resendTestSms = (client: Caller, request: SendSmsCodeRequest = {}) =>
  tfaCall(client, "POST", `${TFA}/resend/`, SendCodeResponse, { schema: SendSmsCodeRequest, body: request });

/** `client.tfa`: every 2FA endpoint (`/api/v0/tfa/...`); `loginWith2fa` is the login workflow over them. */
export function tfaApi(client: Caller) {
  return {
    status: () => tfaStatus(client),
    login: (request: TfaLoginRequest) => completeTfaLogin(client, request),
    sendEmailCode: (request?: SendEmailCodeRequest) => sendEmailCode(client, request),
    sendSmsCode: (request?: SendSmsCodeRequest) => sendSmsCode(client, request),
    resendSmsCode: (request?: SendSmsCodeRequest) => resendSmsCode(client, request),
    setupTotp: () => setupTotp(client),
    authorizeNewMethod: (request?: AuthorizeNewMethodRequest) => authorizeNewMethod(client, request),
    confirmAuthorization: (request: ConfirmAuthorizationRequest) => confirmAuthorization(client, request),
    confirmNewMethod: (request: ConfirmNewMethodRequest) => confirmNewMethod(client, request),
    removeMethod: (request: RemoveMethodRequest) => removeTfaMethod(client, request),
    updateMethod: (request: UpdateMethodRequest) => updateTfaMethod(client, request),
    regenerateBackupCodes: (request: RegenBackupCodesRequest) => regenerateBackupCodes(client, request),
    /** @deprecated path; use the one it names. */ sendTestSms: (request?: SendSmsCodeRequest) => sendTestSms(client, request),
    /** @deprecated path; use the one it names. */ submitTestCode: (request: ConfirmNewMethodRequest) => submitTestCode(client, request),
    /** @deprecated path; use the one it names. */ resendTestSms: (request?: SendSmsCodeRequest) => resendTestSms(client, request),
  };
}

// ---- workflow ----

export interface LoginWith2faOptions {
  /** The second factor to log in with. */
  method: "sms" | "email" | "totp" | "backup";
  /**
   * Supplies the 6-digit code once it is due: for SMS and email after the code was sent (ask the user, or read
   * the emulator's outbox), for TOTP from the authenticator (e.g. `() => totp(secret)`).
   */
  code?: (context: { method: "sms" | "email" | "totp"; secret?: string }) => string | Promise<string>;
  /** For `method: "backup"`. */
  backupCode?: string;
  /** Which method, when the account has several of the type. */
  tfaMethodId?: number;
  /** SMS: the number to send to when neither a method nor the number on file says. */
  phoneNumber?: string;
  /** Ask for an admin session. */
  admin?: boolean;
}

export interface TfaSession {
  /** Use as the bearer value from now on. */
  sessionKey: string;
  user: TfaLoginResponse;
  /** Set when a backup code was used and some are left. */
  backupCodesRemaining?: number;
}

/**
 * The CLI login: with the client's API key as bearer, sends a code when the method needs one, gets the code
 * from `options.code`, completes the login and returns the session key.
 */
export async function loginWith2fa(client: Caller, options: LoginWith2faOptions): Promise<TfaSession> {
  const request = await proofFor(client, options);
  const user = await completeTfaLogin(client, { ...request, tfa_method_id: options.tfaMethodId, admin: options.admin });
  if (!user.session_key) {
    throw new GpuRentalError("The 2FA login answered without session_key: the service treated the call as a browser login.");
  }
  return { sessionKey: user.session_key, user, backupCodesRemaining: user.backup_codes_remaining };
}

async function proofFor(client: Caller, options: LoginWith2faOptions): Promise<TfaLoginRequest> {
  if (options.method === "backup") {
    if (!options.backupCode) throw new BadRequestError("loginWith2fa: method 'backup' needs backupCode.", { code: "bad_request" });
    return { backup_code: options.backupCode };
  }
  if (!options.code) throw new BadRequestError(`loginWith2fa: method '${options.method}' needs a code supplier.`, { code: "bad_request" });
  const secret = await sendCodeFor(client, options);
  const code = await options.code({ method: options.method, secret });
  return { tfa_method: options.method, code, secret };
}

/** Sends the code the method needs (none for TOTP) and returns its challenge secret. */
async function sendCodeFor(client: Caller, options: LoginWith2faOptions): Promise<string | undefined> {
  if (options.method === "totp") return undefined;
  if (options.method === "email") return (await sendEmailCode(client)).secret;
  const target = { tfa_method_id: options.tfaMethodId, phone_number: options.phoneNumber };
  try {
    return (await sendSmsCode(client, target)).secret;
  } catch (error) {
    // A code sent a moment ago (e.g. an interrupted earlier try) is still live: the service wants a resend.
    if (error instanceof GpuRentalError && error.code === "tfa_challenge_exists") return (await resendSmsCode(client, target)).secret;
    throw error;
  }
}
