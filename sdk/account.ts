import type { Caller } from "./call";
import {
  AuditLogRow, AuditLogsResponse, IpAddressesResponse, IpAddressRow, NotificationPreferences, NotificationPrefsRequest, NotificationPrefsResponse,
  NotificationType, NotificationTypesResponse, SetUserRequest, SuccessResponse, TransferCreditRequest,
} from "./schemas";

/** `client.account`: the account's credit moves, its details, its history (addresses, important actions). */
export function accountApi(client: Caller) {
  return {
    /** Moves `amount` dollars of credit to another account (its email or user id). Irreversible. */
    transferCredit: async (recipient: string | number, amount: number): Promise<void> => {
      await client.call({ method: "PUT", path: "/api/v0/commands/transfer_credit/", body: TransferCreditRequest.parse({ sender: "me", recipient: String(recipient), amount }), schema: SuccessResponse });
    },
    /** Sets the account's details (`fullname`, `username`, billing address fields, ...), by the service's names. */
    update: async (fields: SetUserRequest): Promise<void> => {
      await client.call({ method: "PUT", path: "/api/v0/users/", body: SetUserRequest.parse(fields), schema: SuccessResponse, idempotent: true });
    },
    /** The addresses the account's keys were used from. */
    ipAddresses: async (): Promise<IpAddressRow[]> => {
      const answer = await client.call({ method: "GET", path: "/api/v0/users/me/ipaddrs/", schema: IpAddressesResponse });
      return Array.isArray(answer) ? answer : answer.results;
    },
    /** The account's important actions (changes made through the API), newest first. */
    auditLogs: async (): Promise<AuditLogRow[]> => {
      const answer = await client.call({ method: "GET", path: "/api/v0/audit_logs/", schema: AuditLogsResponse });
      if (Array.isArray(answer)) return answer;
      const wrapped = answer as { results?: AuditLogRow[]; audit_logs?: AuditLogRow[] };
      return wrapped.results ?? wrapped.audit_logs ?? [];
    },
  };
}

/** `client.notifications`: the kinds of event and the account's choice of channel for each. */
export function notificationsApi(client: Caller) {
  const path = "/api/v0/users/me/notification-prefs";
  return {
    types: async (): Promise<NotificationType[]> => (await client.call({ method: "GET", path: "/api/v0/notification-types", schema: NotificationTypesResponse })).notification_types,
    preferences: async (): Promise<NotificationPreferences> => (await client.call({ method: "GET", path, schema: NotificationPrefsResponse })).notification_preferences,
    /** Replaces every choice (`{client: {low_credit: {email, webhooks}}}`); events not named take their default. */
    setPreferences: async (preferences: NotificationPreferences): Promise<NotificationPreferences> =>
      (await client.call({ method: "PUT", path, body: NotificationPrefsRequest.parse({ notification_preferences: preferences }), schema: NotificationPrefsResponse, idempotent: true })).notification_preferences,
  };
}
