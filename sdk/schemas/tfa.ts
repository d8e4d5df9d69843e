import { z } from "zod";
import { User } from "./users";

/**
 * Wire format of two-factor authentication (`/api/v0/tfa/...`). The emulator validates request bodies with the
 * request schemas (a failure is 400 `bad_request`); the SDK validates responses with the response schemas.
 *
 * `tfa_method` is a plain string in requests on purpose: an unsupported value is the service's own error
 * `invalid_tfa_method`, not a validation failure.
 */

/** Method labels are at most 30 characters. */
export const TFA_LABEL_MAX = 30;

export const TfaCode = z.string().regex(/^\d{6}$/, "a 2FA code is 6 digits");
/** E.164: a plus, a country code that does not start with 0, at most 15 digits in all. */
export const PhoneNumber = z.string().regex(/^\+[1-9]\d{6,14}$/, "a phone number is E.164, e.g. +14155550123");
/** Three groups of four characters; compared without regard to case. */
export const BackupCode = z.string().regex(/^[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}$/, "a backup code has the form XXXX-XXXX-XXXX");
export const TfaLabel = z.string().max(TFA_LABEL_MAX, `a label is at most ${TFA_LABEL_MAX} characters`);
export const TfaMethodType = z.enum(["sms", "totp"]);
export type TfaMethodType = z.infer<typeof TfaMethodType>;
/** What a code can be verified by: a stored method type, or email (never stored as a method). */
export const TfaChannel = z.enum(["sms", "totp", "email"]);
export type TfaChannel = z.infer<typeof TfaChannel>;

const MethodName = z.string();
const Secret = z.string().min(1);
const MethodId = z.number().int();

/** The fields that prove the caller holds a second factor: a code (with its challenge secret), or a backup code. */
const Proof = {
  tfa_method: MethodName.optional(),
  code: TfaCode.optional(),
  secret: Secret.optional(),
  tfa_method_id: MethodId.optional(),
  backup_code: BackupCode.optional(),
};

// ---- requests ----

/** `POST /api/v0/tfa/`: complete a login. */
export const TfaLoginRequest = z.object({ ...Proof, admin: z.boolean().optional() });
export type TfaLoginRequest = z.infer<typeof TfaLoginRequest>;

/** `POST /api/v0/tfa/email/`. */
export const SendEmailCodeRequest = z.object({ secret: Secret.optional() });
export type SendEmailCodeRequest = z.infer<typeof SendEmailCodeRequest>;

/** `POST /api/v0/tfa/sms/` and `POST /api/v0/tfa/sms/resend/` (and their deprecated paths). */
export const SendSmsCodeRequest = z.object({
  phone_number: PhoneNumber.optional(),
  tfa_method_id: MethodId.optional(),
  secret: Secret.optional(),
});
export type SendSmsCodeRequest = z.infer<typeof SendSmsCodeRequest>;

/** `POST /api/v0/tfa/authorize-new-method/`. */
export const AuthorizeNewMethodRequest = z.object({
  tfa_method: MethodName.optional(),
  tfa_method_id: MethodId.optional(),
  backup_code: BackupCode.optional(),
});
export type AuthorizeNewMethodRequest = z.infer<typeof AuthorizeNewMethodRequest>;

/** `PUT /api/v0/tfa/authorize-new-method/`. Both are required; a missing one is `missing_params`. */
export const ConfirmAuthorizationRequest = z.object({ code: TfaCode.optional(), secret: Secret.optional() });
export type ConfirmAuthorizationRequest = z.infer<typeof ConfirmAuthorizationRequest>;

/** `POST /api/v0/tfa/confirm-new/` (and the deprecated `POST /api/v0/tfa/test-submit/`). */
export const ConfirmNewMethodRequest = z.object({
  tfa_method: MethodName,
  code: TfaCode.optional(),
  secret: Secret.optional(),
  phone_number: PhoneNumber.optional(),
  label: TfaLabel.optional(),
});
export type ConfirmNewMethodRequest = z.infer<typeof ConfirmNewMethodRequest>;

/** `DELETE /api/v0/tfa/`. */
export const RemoveMethodRequest = z.object({ ...Proof, target_id: MethodId.optional() });
export type RemoveMethodRequest = z.infer<typeof RemoveMethodRequest>;

/** `PUT /api/v0/tfa/update/`. */
export const UpdateMethodRequest = z.object({
  tfa_method_id: MethodId.optional(),
  tfa_method: MethodName.optional(),
  label: TfaLabel.optional(),
  is_primary: z.boolean().optional(),
});
export type UpdateMethodRequest = z.infer<typeof UpdateMethodRequest>;

/** `PUT /api/v0/tfa/regen-backup-codes/`. */
export const RegenBackupCodesRequest = z.object(Proof);
export type RegenBackupCodesRequest = z.infer<typeof RegenBackupCodesRequest>;

// ---- responses ----

/** A stored 2FA method. Timestamps are epoch seconds; TOTP secrets are never returned. */
export const TfaMethod = z.looseObject({
  id: z.number().int(),
  user_id: z.number().int(),
  method: TfaMethodType,
  label: z.string(),
  /** SMS only, masked to the last 4 digits. */
  phone_number: z.string().nullable().optional(),
  is_primary: z.boolean(),
  fail_count: z.number().int(),
  locked_until: z.number().nullable(),
  created_at: z.number(),
  last_used: z.number().nullable(),
});
export type TfaMethod = z.infer<typeof TfaMethod>;

export const TfaStatusResponse = z.looseObject({
  success: z.boolean(),
  tfa_enabled: z.boolean(),
  methods: z.array(TfaMethod),
  backup_codes_remaining: z.number().int(),
  new_method_authorized: z.boolean(),
});
export type TfaStatusResponse = z.infer<typeof TfaStatusResponse>;

/** The user object plus the session. */
export const TfaLoginResponse = User.extend({
  session_key: z.string().optional(),
  backup_codes_remaining: z.number().int().optional(),
  legacy_tfa_user: z.literal(true).optional(),
});
export type TfaLoginResponse = z.infer<typeof TfaLoginResponse>;

/** A code was sent; `secret` goes back with the code to whichever endpoint verifies it. */
export const SendCodeResponse = z.looseObject({ success: z.boolean().optional(), msg: z.string(), secret: z.string() });
export type SendCodeResponse = z.infer<typeof SendCodeResponse>;

export const TotpSetupResponse = z.looseObject({ secret: z.string(), provisioning_uri: z.string() });
export type TotpSetupResponse = z.infer<typeof TotpSetupResponse>;

/** Code flow: `{success, secret}`; backup-code flow: `{success, msg}`. */
export const AuthorizeNewMethodResponse = z.looseObject({ success: z.boolean(), secret: z.string().optional(), msg: z.string().optional() });
export type AuthorizeNewMethodResponse = z.infer<typeof AuthorizeNewMethodResponse>;

export const TfaMessageResponse = z.looseObject({ success: z.boolean(), msg: z.string() });
export type TfaMessageResponse = z.infer<typeof TfaMessageResponse>;

/** `backup_codes` only when the new method is the first one: shown once, in plaintext. */
export const ConfirmNewMethodResponse = TfaMessageResponse.extend({ backup_codes: z.array(z.string()).optional() });
export type ConfirmNewMethodResponse = z.infer<typeof ConfirmNewMethodResponse>;

/** `remaining_methods` is absent when the last method went (2FA is then disabled). */
export const RemoveMethodResponse = z.looseObject({ msg: z.string(), remaining_methods: z.number().int().optional() });
export type RemoveMethodResponse = z.infer<typeof RemoveMethodResponse>;

export const UpdateMethodResponse = TfaMessageResponse.extend({ method: TfaMethod });
export type UpdateMethodResponse = z.infer<typeof UpdateMethodResponse>;

export const RegenBackupCodesResponse = z.looseObject({ msg: z.string(), backup_codes: z.array(z.string()) });
export type RegenBackupCodesResponse = z.infer<typeof RegenBackupCodesResponse>;

/** A 2FA error: `{error, msg}`; lockout-related errors add `fail_count` and `locked_until` (epoch seconds or null). */
export const TfaErrorBody = z.looseObject({
  error: z.string(),
  msg: z.string(),
  fail_count: z.number().int().optional(),
  locked_until: z.number().nullable().optional(),
});
export type TfaErrorBody = z.infer<typeof TfaErrorBody>;
