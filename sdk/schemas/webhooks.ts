import { z } from "zod";

/**
 * Notification webhooks (`/api/v0/webhooks`, the vendor's description; the public client 1.9.1 has none): a URL the
 * service POSTs signed events to. The secret is shown at creation and rotation only.
 */

/**
 * The event keys the emulator sends. The vendor documents `client:low_credit` and `client:outbid` by key and the
 * instance events by display name only: the `client:instance_*` keys are the emulator's (emulator/WEBHOOKS.md).
 */
export const WEBHOOK_EVENT_TYPES = ["client:low_credit", "client:outbid", "client:instance_started", "client:instance_stopped", "client:instance_deleted"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** At most 4 a user, a URL of at most 2,048 characters with a host, a name of at most 120 without control characters. */
export const MAX_WEBHOOKS = 4;
// Control characters are what the pattern refuses (a class schemathesis can generate from, unlike \p{Cc}).
// eslint-disable-next-line no-control-regex
export const WebhookName = z.string().max(120).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "a webhook's name has no control characters").nullable();
export const WebhookUrl = z.url({ protocol: /^https?$/ }).max(2048);
export const WebhookEventTypes = z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1);

export const CreateWebhookRequest = z.object({ name: WebhookName.optional(), webhook_url: WebhookUrl, event_types: WebhookEventTypes });
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;
export const UpdateWebhookRequest = z.object({ name: WebhookName.optional(), webhook_url: WebhookUrl.optional(), event_types: WebhookEventTypes.optional() });
export type UpdateWebhookRequest = z.infer<typeof UpdateWebhookRequest>;

export const Webhook = z.looseObject({
  id: z.number().int(),
  user_id: z.number().int().optional(),
  name: z.string().nullable().optional(),
  webhook_url: z.string(),
  event_types: z.array(z.string()),
  created_at: z.number().optional(),
  updated_at: z.number().optional(),
  /** Only in the answers of a creation and a rotation. */
  webhook_secret: z.string().optional(),
});
export type Webhook = z.infer<typeof Webhook>;

export const WebhookListResponse = z.looseObject({ success: z.boolean().optional(), webhooks: z.array(Webhook).default([]) });
export const WebhookResponse = z.looseObject({ success: z.boolean().optional(), webhook: Webhook, enabled_notification_preferences: z.array(z.string()).optional() });
export const WebhookTestResponse = z.looseObject({ success: z.boolean(), msg: z.string().optional() });

/** What a delivery POSTs (the vendor's docs): `notif_type` is the event's key without its `client:` part. */
export const WebhookDelivery = z.looseObject({
  event_id: z.string(),
  user_id: z.number().int(),
  notif_type: z.string(),
  subject: z.string(),
  message: z.string(),
  timestamp: z.number(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** The headers of a delivery, lower-cased as Node gives them. */
export const WEBHOOK_HEADERS = {
  eventId: "x-vast-event-id",
  attempt: "x-vast-delivery-attempt",
  timestamp: "x-vast-timestamp",
  signature: "x-vast-signature-256",
} as const;

/** A channel's choice for one event: by email, by the account's webhooks. */
export const ChannelChoice = z.object({ email: z.boolean(), webhooks: z.boolean() });
/** Preferences by context (`client`, `host`) and event slug (`low_credit`), as `notification-prefs` carries them. */
export const NotificationPreferences = z.record(z.string().max(40), z.record(z.string().max(80), ChannelChoice));
export type NotificationPreferences = z.infer<typeof NotificationPreferences>;

/** `PUT /api/v0/users/{id}/notification-prefs/`: the whole set (it replaces what was). */
export const NotificationPrefsRequest = z.object({ notification_preferences: NotificationPreferences });
export const NotificationPrefsResponse = z.looseObject({ success: z.boolean().optional(), notification_preferences: NotificationPreferences });

/** A row of `GET /api/v0/notification-types/`. */
export const NotificationType = z.looseObject({
  key: z.string(),
  slug: z.string().optional(),
  context: z.string().optional(),
  topic: z.string().nullable().optional(),
  category: z.string().optional(),
  display_name: z.string().optional(),
  default_preferences: z.looseObject({ email: z.boolean(), webhooks: z.boolean() }).optional(),
  mandatory_email: z.boolean().optional(),
});
export type NotificationType = z.infer<typeof NotificationType>;
export const NotificationTypesResponse = z.looseObject({ success: z.boolean().optional(), notification_types: z.array(NotificationType) });
