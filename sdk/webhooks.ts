import { createHmac, timingSafeEqual } from "node:crypto";
import type { Caller } from "./call";
import { foundOrNull, GpuRentalError } from "./errors";
import {
  CreateWebhookRequest, SuccessResponse, UpdateWebhookRequest, Webhook, WEBHOOK_HEADERS, WebhookDelivery, WebhookListResponse, WebhookResponse, WebhookTestResponse,
} from "./schemas";

/** `client.webhooks`: where the service POSTs the account's events, signed with each webhook's secret. */
export function webhooksApi(client: Caller) {
  const path = (id: number, more = "") => `/api/v0/webhooks/${id}${more}`;
  return {
    list: async (): Promise<Webhook[]> => (await client.call({ method: "GET", path: "/api/v0/webhooks", schema: WebhookListResponse })).webhooks,
    get: async (id: number): Promise<Webhook | null> => (await client.call({ method: "GET", path: "/api/v0/webhooks", schema: WebhookListResponse })).webhooks.find((w) => w.id === id) ?? null,
    /** Answers the webhook with its secret (`webhook_secret`), which the service never shows again. */
    create: async (webhook: CreateWebhookRequest): Promise<Webhook> =>
      (await client.call({ method: "POST", path: "/api/v0/webhooks", body: CreateWebhookRequest.parse(webhook), schema: WebhookResponse })).webhook,
    update: async (id: number, change: UpdateWebhookRequest): Promise<Webhook | null> =>
      foundOrNull(async () => (await client.call({ method: "PUT", path: path(id), body: UpdateWebhookRequest.parse(change), schema: WebhookResponse, idempotent: true })).webhook),
    delete: async (id: number): Promise<void> => {
      await client.call({ method: "DELETE", path: path(id), schema: SuccessResponse, idempotent: true });
    },
    /** A new secret (the old one stops signing at once); answers the webhook with it. */
    rotateSecret: async (id: number): Promise<Webhook> => (await client.call({ method: "POST", path: path(id, "/rotate-secret"), schema: WebhookResponse })).webhook,
    /** The service sends a `webhook_test` event to it once, without retries. */
    test: async (id: number): Promise<void> => {
      await client.call({ method: "POST", path: path(id, "/test"), schema: WebhookTestResponse });
    },
  };
}

/** A delivery whose signature or age does not hold: the receiver should answer it 401 and do nothing. */
export class WebhookSignatureError extends GpuRentalError {
  override name = "WebhookSignatureError";
}

export interface VerifyOptions {
  /** The webhook's secret (`webhook_secret` at creation or rotation). */
  secret: string;
  /** The request's body exactly as received (bytes or text): the signature is over it, not over a re-encoding. */
  body: string | Buffer;
  /** The request's headers (Node's lower-cased names, or any case). */
  headers: Record<string, string | string[] | undefined>;
  /** How old a delivery may be, seconds (default 300): an older one is refused as a replay. */
  toleranceSeconds?: number;
  /** Now, epoch ms (default the machine's clock). */
  now?: number;
}

/**
 * Checks a delivery as a receiver must: `X-Vast-Signature-256` is `sha256=` and the hex HMAC-SHA256, by the
 * webhook's secret, of `<X-Vast-Timestamp>.<raw body>`, compared in constant time, and the timestamp within the
 * tolerance. Answers the parsed event; throws a WebhookSignatureError saying what did not hold.
 */
export function verifyWebhookDelivery(options: VerifyOptions): WebhookDelivery {
  const header = (name: string) => {
    const key = Object.keys(options.headers).find((k) => k.toLowerCase() === name);
    const value = key === undefined ? undefined : options.headers[key];
    return Array.isArray(value) ? value[0] : value;
  };
  const timestamp = header(WEBHOOK_HEADERS.timestamp);
  const signature = header(WEBHOOK_HEADERS.signature);
  if (!timestamp || !/^\d+$/.test(timestamp) || !signature) throw new WebhookSignatureError(`The delivery lacks ${WEBHOOK_HEADERS.timestamp} or ${WEBHOOK_HEADERS.signature}: not from the service.`);
  const body = typeof options.body === "string" ? Buffer.from(options.body) : options.body;
  const expected = Buffer.from(webhookSignature(options.secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new WebhookSignatureError("The delivery's signature does not match the webhook's secret (rotated? another webhook's?).");
  const age = (options.now ?? Date.now()) / 1000 - Number(timestamp);
  if (Math.abs(age) > (options.toleranceSeconds ?? 300)) throw new WebhookSignatureError(`The delivery is ${Math.round(age)} s old, beyond the tolerance: a replay, or a clock far off.`);
  return WebhookDelivery.parse(JSON.parse(body.toString("utf8")));
}

/** The signature the service sends for `body` at `timestamp` (epoch seconds): what `verifyWebhookDelivery` checks. */
export function webhookSignature(secret: string, timestamp: number, body: string | Buffer): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`;
}
