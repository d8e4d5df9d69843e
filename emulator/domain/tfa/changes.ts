import { RegenBackupCodesRequest, RemoveMethodRequest, UpdateMethodRequest } from "../../../sdk/schemas/tfa";
import type { UserRecord } from "../records";
import { badRequest, notFound } from "../errors";
import { methodType } from "./channels";
import { MethodRecord, smsLabel, tfaEnabled } from "./methods";
import { TfaParts } from "./parts";
import { verify } from "./verification";

/*
 * Changing what a user has: updating and removing methods (the last one going disables 2FA), regenerating
 * backup codes (a legacy account's migration), and the emulator control that makes an account legacy.
 */

/** `DELETE /tfa/`: removes the target (default: the verifying method); the last one going disables 2FA. */
export function removeMethod(tfa: TfaParts, user: UserRecord, request: RemoveMethodRequest): { remaining: number } {
  if (request.backup_code && request.target_id === undefined) throw badRequest("bad_request", "target_id is required with backup_code.");
  const target = request.target_id === undefined ? undefined : tfa.methods.own(user, request.target_id);
  const verified = verify(tfa, user, request, "verify");
  const removed = target ?? verified.method;
  if (!removed) throw badRequest("bad_request", "target_id is required when verifying by email.");
  tfa.methods.delete(removed.id);
  // The sessions that method's codes opened end with it.
  tfa.accounts.endSessions((session) => session.tfaMethodId === removed.id);
  const remaining = tfa.methods.of(user);
  if (remaining.length === 0) disable(tfa, user);
  else if (removed.isPrimary) remaining[0].isPrimary = true;
  return { remaining: remaining.length };
}

/** `PUT /tfa/update/`: label and primary flag. */
export function updateMethod(tfa: TfaParts, user: UserRecord, request: UpdateMethodRequest): MethodRecord {
  const type = request.tfa_method === undefined ? undefined : methodType(request.tfa_method);
  if (request.tfa_method_id === undefined && type === undefined) throw badRequest("bad_request", "Send tfa_method_id or tfa_method.");
  const method = tfa.methods.find(user, type, request.tfa_method_id);
  if (!method) throw notFound("not_found", `No ${type} method is configured.`);
  if (request.label !== undefined) method.label = request.label;
  if (request.is_primary === true) for (const m of tfa.methods.of(user)) m.isPrimary = m === method;
  if (request.is_primary === false) method.isPrimary = false;
  return method;
}

/**
 * `PUT /tfa/regen-backup-codes/`: ten new codes replace all others. A legacy account (2FA on, no method rows)
 * first gets an SMS method from the number on file: that is its migration.
 */
export function regenerateBackupCodes(tfa: TfaParts, user: UserRecord, request: RegenBackupCodesRequest): string[] {
  if (!tfaEnabled(user)) throw badRequest("2fa_verification_failed", "Two-factor authentication is not enabled on this account.");
  const migrating = user.tfaStatus === "legacy" && tfa.methods.of(user).length === 0;
  // Before verifying, so no code is spent on a migration that cannot happen.
  if (migrating && !user.phoneNumber) throw badRequest("missing_phone_number", "The legacy account has no phone number on file to migrate.");
  // Verified first (a legacy account against its number on file): a refused request changes nothing.
  verify(tfa, user, request, "verify");
  if (migrating) migrateLegacy(tfa, user, user.phoneNumber!);
  return tfa.backupCodes.replace(user);
}

/** Makes the account a legacy 2FA account: 2FA on, SMS to the number on file, no method rows, no backup codes. */
export function makeLegacy(tfa: TfaParts, user: UserRecord): void {
  if (tfa.methods.of(user).length > 0) throw badRequest("invalid_args", "A legacy account has no method rows: remove the methods first.");
  tfa.backupCodes.softDelete(user);
  user.tfaStatus = "legacy";
}

/** A legacy account's number on file becomes its SMS method (called once its code is verified). */
function migrateLegacy(tfa: TfaParts, user: UserRecord, phoneNumber: string): void {
  tfa.methods.add({ userId: user.id, method: "sms", label: smsLabel(phoneNumber), isPrimary: true }, { phoneNumber });
  user.tfaStatus = "enabled";
}

/** The last method went: 2FA is off, its sessions end, backup codes are soft-deleted, any authorization is dropped. */
function disable(tfa: TfaParts, user: UserRecord): void {
  tfa.accounts.endSessions((session) => session.userId === user.id);
  tfa.backupCodes.softDelete(user);
  tfa.authorizations.drop(user);
  user.tfaStatus = "disabled";
}
