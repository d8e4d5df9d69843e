import { maskPhone, MethodRecord, seconds, TfaStatus } from "../../domain/tfa";

/** A method as the wire shows it: phone masked, TOTP secret never, times in epoch seconds. */
export function tfaMethodView(method: MethodRecord) {
  return {
    id: method.id,
    user_id: method.userId,
    method: method.method,
    label: method.label,
    phone_number: method.phoneNumber ? maskPhone(method.phoneNumber) : null,
    is_primary: method.isPrimary,
    fail_count: method.failCount,
    locked_until: seconds(method.lockedUntil),
    created_at: seconds(method.createdAt),
    last_used: seconds(method.lastUsed),
  };
}

/** `GET /api/v0/tfa/status/`. */
export function tfaStatusView(status: TfaStatus) {
  return {
    success: true,
    tfa_enabled: status.enabled,
    methods: status.methods.map(tfaMethodView),
    backup_codes_remaining: status.backupCodesRemaining,
    new_method_authorized: status.newMethodAuthorized,
  };
}
