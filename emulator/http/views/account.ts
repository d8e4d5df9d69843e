import type { AuditEntry, CloudConnectionRecord, InstanceRecord, UserRecord } from "../../domain/records";

/** `GET /api/v0/audit_logs/`: a bare list, newest first, as the public client reads it. */
export function auditLogView(user: UserRecord, entries: readonly AuditEntry[]) {
  return [...entries].reverse().map((e) => ({
    id: e.id,
    user_id: user.id,
    ip_address: e.ip,
    api_key_id: e.apiKeyId,
    created_at: e.at / 1000,
    api_route: e.route,
    args: e.args,
  }));
}

/** `GET /api/v0/users/{id}/ipaddrs/`'s rows: the description's fields, and those the public client shows. */
export function ipAddressesView(user: UserRecord) {
  return (user.ipAddresses ?? []).map((a, i) => ({
    id: i + 1,
    user_id: user.id,
    ip_address: a.ip,
    ip: a.ip,
    timestamp: new Date(a.lastSeen).toISOString(),
    first_seen: a.firstSeen / 1000,
    last_seen: a.lastSeen / 1000,
    first_location: "",
  }));
}

/** A cloud connection as `GET /api/v0/users/cloud_integrations/` lists it. */
export function cloudConnectionView(connection: CloudConnectionRecord) {
  return { id: connection.id, name: connection.name, cloud_type: connection.cloudType };
}

/** The instance's deposit as `GET /api/v0/instances/balance/{id}/` shows it. */
export function depositView(instance: InstanceRecord) {
  const deposit = instance.deposit;
  return {
    success: true,
    refundable_deposit: Number((deposit?.remaining ?? 0).toFixed(6)),
    total_discount: Number((deposit?.discounted ?? 0).toFixed(6)),
    discount_months: Math.floor(deposit?.months ?? 0),
  };
}
