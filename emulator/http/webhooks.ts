import { FastifyInstance } from "fastify";
import { CreateWebhookRequest, SuccessResponse, UpdateWebhookRequest, WebhookListResponse, WebhookResponse, WebhookTestResponse } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import type { WebhookRecord } from "../domain/records";
import { idParam, route } from "./routes";

/** A webhook as the vendor shows it (times in epoch seconds); its secret only where `withSecret` (creation, rotation). */
const view = (userId: number, hook: WebhookRecord, withSecret = false) => ({
  id: hook.id,
  user_id: userId,
  name: hook.name,
  webhook_url: hook.url,
  event_types: hook.eventTypes,
  created_at: hook.createdAt / 1000,
  updated_at: hook.updatedAt / 1000,
  ...(withSecret && { webhook_secret: hook.secret }),
});

const RULES = "at most 4 webhooks a user (webhook_limit); an http:// URL unless the emulator was started for local use (invalid_url)";

/** Notification webhooks (`/api/v0/webhooks`, the vendor's paths, without a trailing slash). */
export function registerWebhooks(app: FastifyInstance, market: Marketplace): void {
  const { webhooks } = market;

  route(app, market, {
    method: "GET",
    url: "/api/v0/webhooks",
    permission: "user_read",
    response: WebhookListResponse,
    handler: ({ principal }) => ({ success: true, webhooks: webhooks.list(principal.user).map((hook) => view(principal.user.id, hook)) }),
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/webhooks",
    permission: "user_write",
    body: CreateWebhookRequest,
    response: WebhookResponse,
    rules: RULES,
    handler: ({ principal, body }) => {
      const hook = webhooks.create(principal.user, body);
      return { success: true, webhook: view(principal.user.id, hook, true), enabled_notification_preferences: hook.eventTypes };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/webhooks/:id",
    permission: "user_write",
    refusals: ["not_found"],
    body: UpdateWebhookRequest,
    response: WebhookResponse,
    rules: RULES,
    handler: ({ principal, params, body }) => {
      const hook = webhooks.update(principal.user, idParam(params, "id"), body);
      return { success: true, webhook: view(principal.user.id, hook), enabled_notification_preferences: hook.eventTypes };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/webhooks/:id",
    permission: "user_write",
    refusals: ["not_found"],
    response: SuccessResponse,
    handler: ({ principal, params }) => {
      webhooks.remove(principal.user, idParam(params, "id"));
      return { success: true };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/webhooks/:id/rotate-secret",
    permission: "user_write",
    refusals: ["not_found"],
    response: WebhookResponse,
    handler: ({ principal, params }) => ({ success: true, webhook: view(principal.user.id, webhooks.rotate(principal.user, idParam(params, "id")), true) }),
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/webhooks/:id/test",
    permission: "user_write",
    refusals: ["not_found"],
    response: WebhookTestResponse,
    handler: ({ principal, params }) => {
      webhooks.test(principal.user, idParam(params, "id"));
      return { success: true, msg: "Test webhook delivered" };
    },
  });
}
