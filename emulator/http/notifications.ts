import { FastifyInstance } from "fastify";
import { NotificationPrefsRequest, NotificationPrefsResponse, NotificationTypesResponse } from "../../sdk/schemas";
import { forbidden } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { notifications } from "../domain/notifications";
import { route } from "./routes";

/** The kinds of notification and the account's choices of channel (the vendor's paths, without a trailing slash). */
export function registerNotifications(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "GET",
    url: "/api/v0/notification-types",
    permission: "user_read",
    response: NotificationTypesResponse,
    handler: () => ({ success: true, notification_types: notifications.types() }),
  });

  /** `me` or the caller's own id: another account's preferences are not the caller's to read. */
  const own = (principal: { user: { id: number } }, userId: string) => {
    if (userId !== "me" && userId !== String(principal.user.id)) throw forbidden("not_authorized", "Only your own preferences (user_id me).");
  };

  route(app, market, {
    method: "GET",
    url: "/api/v0/users/:user_id/notification-prefs",
    permission: "user_read",
    response: NotificationPrefsResponse,
    handler: ({ principal, params }) => {
      own(principal, params.user_id);
      return { success: true, notification_preferences: notifications.of(principal.user) };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/users/:user_id/notification-prefs",
    permission: "user_write",
    rules: "an event that is no notification type (invalid_notification_type); email off for an event always sent by email (mandatory_email)",
    body: NotificationPrefsRequest,
    response: NotificationPrefsResponse,
    handler: ({ principal, params, body }) => {
      own(principal, params.user_id);
      notifications.set(principal.user, body.notification_preferences);
      return { success: true, notification_preferences: notifications.of(principal.user) };
    },
  });
}
