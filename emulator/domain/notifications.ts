import { WEBHOOK_EVENT_TYPES, WebhookEventType } from "../../sdk/schemas";
import { badRequest } from "./errors";
import type { UserRecord } from "./records";

/** How each event is shown and what it defaults to (docs/service-facts.md#notification-preferences). */
const TYPES: Record<WebhookEventType, { display: string; category: string; mandatoryEmail: boolean }> = {
  "client:low_credit": { display: "Low credit", category: "billing", mandatoryEmail: true },
  "client:outbid": { display: "Instance outbid", category: "instances", mandatoryEmail: false },
  "client:instance_started": { display: "Instance started", category: "instances", mandatoryEmail: false },
  "client:instance_stopped": { display: "Instance stopped", category: "instances", mandatoryEmail: false },
  "client:instance_deleted": { display: "Instance deleted", category: "instances", mandatoryEmail: false },
};

/**
 * The kinds of notification and an account's choice of channel for each (`GET /api/v0/notification-types/`,
 * `/api/v0/users/{id}/notification-prefs/`): a webhook subscribed to an event turns its webhook channel on; a
 * preference that turns it off stops every delivery of that event to the account's webhooks.
 */
export const notifications = {
  types() {
    return WEBHOOK_EVENT_TYPES.map((key) => {
      const [context, slug] = key.split(":");
      const { display, category, mandatoryEmail } = TYPES[key];
      return { key, slug, context, topic: null, category, display_name: display, default_preferences: { email: true, webhooks: false }, mandatory_email: mandatoryEmail };
    });
  },

  /** Every event's choice: the account's, or the default (email on; webhooks on where a webhook subscribes). */
  of(user: UserRecord): Record<string, Record<string, { email: boolean; webhooks: boolean }>> {
    const prefs: Record<string, Record<string, { email: boolean; webhooks: boolean }>> = {};
    for (const key of WEBHOOK_EVENT_TYPES) {
      const [context, slug] = key.split(":");
      const subscribed = (user.webhooks ?? []).some((hook) => hook.eventTypes.includes(key));
      (prefs[context] ??= {})[slug] = user.notificationPrefs?.[key] ?? { email: true, webhooks: subscribed };
    }
    return prefs;
  },

  /** Replaces the account's choices: every event named must be one the service has; the others take their default. */
  set(user: UserRecord, prefs: Record<string, Record<string, { email: boolean; webhooks: boolean }>>): void {
    const next: Record<string, { email: boolean; webhooks: boolean }> = {};
    for (const [context, events] of Object.entries(prefs)) {
      for (const [slug, choice] of Object.entries(events)) {
        const key = `${context}:${slug}` as WebhookEventType;
        if (!WEBHOOK_EVENT_TYPES.includes(key)) throw badRequest("invalid_notification_type", `${key.slice(0, 80)} is no notification type: see GET /api/v0/notification-types/.`);
        if (TYPES[key].mandatoryEmail && !choice.email) throw badRequest("mandatory_email", `${key} is always sent by email.`);
        next[key] = { ...choice };
      }
    }
    user.notificationPrefs = next;
  },

  /** A webhook subscribed to these events: their webhook channel is on. */
  subscribed(user: UserRecord, events: readonly string[]): void {
    if (!user.notificationPrefs) return;
    for (const key of events) {
      const choice = user.notificationPrefs[key];
      if (choice) choice.webhooks = true;
    }
  },

  /** Whether an event goes to the account's webhooks at all. */
  byWebhook(user: UserRecord, type: string): boolean {
    return user.notificationPrefs?.[type]?.webhooks ?? true;
  },
};
