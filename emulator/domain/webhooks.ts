import { notifications } from "./notifications";
import { randomBytes, randomUUID } from "node:crypto";
import { CreateWebhookRequest, MAX_WEBHOOKS, UpdateWebhookRequest, WebhookDelivery, WebhookEventType } from "../../sdk/schemas";
import type { UserRecord, WebhookRecord } from "./records";
import { badRequest, notFound } from "./errors";

/*
 * Notification webhooks (emulator/WEBHOOKS.md): each user's (at most 4), kept on the user's record, and the events
 * waiting to be delivered to them. The domain says what is due and to whom; emulator/webhooks/deliverer.ts sends it
 * and reports back (delivered, or retry at, or given up).
 */

/** One delivery of one event to one webhook, and its attempts (not kept across restarts of the emulator). */
export interface PendingDelivery {
  eventId: string;
  webhookId: number;
  userId: number;
  body: WebhookDelivery;
  attempt: number;
  /** Epoch ms on the emulator's clock: when the next attempt is due. */
  dueAt: number;
  /** The test event: one attempt, no retries. */
  once?: boolean;
}

/** The retries after a failed attempt (408, 429, 5xx, a timeout), in emulator time: the live schedule is not documented. */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 120_000, 600_000];
/** Credit under which `client:low_credit` is sent, once a crossing. */
export const LOW_CREDIT = 5;

export interface WebhookDeps {
  now: () => number;
  /** Every user: a delivery's webhook is read as it is when it is sent (its URL and secret may have changed). */
  users: () => UserRecord[];
  /**
   * Started for local use (listening on loopback): `http://` URLs are taken and private and loopback targets are
   * delivered to; otherwise, as the live service, a URL must be `https://` and such targets are refused at delivery.
   */
  local: boolean;
}

export class Webhooks {
  private pending: PendingDelivery[] = [];
  /** Told when a delivery becomes due now, so that the deliverer need not poll. */
  onDue?: () => void;

  constructor(private readonly deps: WebhookDeps) {}

  get local(): boolean {
    return this.deps.local;
  }

  private now(): number {
    return this.deps.now();
  }

  list(user: UserRecord): WebhookRecord[] {
    return user.webhooks ?? [];
  }

  create(user: UserRecord, request: CreateWebhookRequest): WebhookRecord {
    this.checkUrl(request.webhook_url);
    const hooks = this.list(user);
    if (hooks.length >= MAX_WEBHOOKS) throw badRequest("webhook_limit", `A user has at most ${MAX_WEBHOOKS} webhooks: delete one first.`);
    const now = this.now();
    const id = user.id * 1_000 + (Math.max(0, ...hooks.map((h) => h.id - user.id * 1_000)) + 1);
    const hook: WebhookRecord = { id, name: request.name ?? null, url: request.webhook_url, eventTypes: request.event_types, secret: newSecret(), createdAt: now, updatedAt: now };
    user.webhooks = [...hooks, hook];
    notifications.subscribed(user, hook.eventTypes);
    return hook;
  }

  update(user: UserRecord, id: number, change: UpdateWebhookRequest): WebhookRecord {
    const hook = this.owned(user, id);
    if (change.webhook_url !== undefined) this.checkUrl(change.webhook_url);
    if (change.name !== undefined) hook.name = change.name;
    if (change.webhook_url !== undefined) hook.url = change.webhook_url;
    if (change.event_types !== undefined) hook.eventTypes = change.event_types;
    if (change.event_types !== undefined) notifications.subscribed(user, change.event_types);
    hook.updatedAt = this.now();
    return hook;
  }

  remove(user: UserRecord, id: number): void {
    this.owned(user, id);
    user.webhooks = this.list(user).filter((h) => h.id !== id);
    this.pending = this.pending.filter((d) => d.webhookId !== id);
  }

  rotate(user: UserRecord, id: number): WebhookRecord {
    const hook = this.owned(user, id);
    hook.secret = newSecret();
    hook.updatedAt = this.now();
    return hook;
  }

  /** The `webhook_test` event, to this webhook only, once. */
  test(user: UserRecord, id: number): void {
    const hook = this.owned(user, id);
    this.queue(user, hook, "webhook_test", "Test webhook", `A test of webhook ${hook.name ?? hook.id}.`, true);
  }

  /** An event of `user`'s: a delivery to each of their webhooks subscribed to its type. */
  emit(user: UserRecord, type: WebhookEventType, subject: string, message: string): void {
    // The account's preference turned this event's webhook channel off: no delivery at all.
    if (!notifications.byWebhook(user, type)) return;
    for (const hook of this.list(user)) if (hook.eventTypes.includes(type)) this.queue(user, hook, type.replace(/^\w+:/, ""), subject, message);
  }

  /** The user's credit went from `before` to `after`: `client:low_credit` when it crossed under the line. */
  creditChanged(user: UserRecord, before: number, after: number): void {
    if (before >= LOW_CREDIT && after < LOW_CREDIT) {
      this.emit(user, "client:low_credit", "Low credit", `Your credit is $${after.toFixed(2)}, under $${LOW_CREDIT}: add credit before your instances stop.`);
    }
  }

  /** The deliveries due now, taken out of the queue: each goes back with `retry`, or is done. */
  takeDue(): { delivery: PendingDelivery; hook: WebhookRecord | undefined }[] {
    const now = this.now();
    const due = this.pending.filter((d) => d.dueAt <= now);
    this.pending = this.pending.filter((d) => d.dueAt > now);
    return due.map((delivery) => ({ delivery, hook: this.hookById(delivery) }));
  }

  /** A failed attempt that may be tried again: queued at the next step of the schedule, or given up (false). */
  retry(delivery: PendingDelivery): boolean {
    const delay = delivery.once ? undefined : RETRY_DELAYS_MS[delivery.attempt - 1];
    if (delay === undefined) return false;
    this.pending.push({ ...delivery, attempt: delivery.attempt + 1, dueAt: this.now() + delay });
    return true;
  }

  /** Epoch ms of the next attempt due, if any. */
  nextDue(): number | undefined {
    return this.pending.length ? Math.min(...this.pending.map((d) => d.dueAt)) : undefined;
  }

  private hookById(delivery: PendingDelivery): WebhookRecord | undefined {
    const user = this.deps.users().find((u) => u.id === delivery.userId);
    return user && this.list(user).find((h) => h.id === delivery.webhookId);
  }

  private queue(user: UserRecord, hook: WebhookRecord, notifType: string, subject: string, message: string, once = false): void {
    const now = this.now();
    const body: WebhookDelivery = { event_id: randomUUID(), user_id: user.id, notif_type: notifType, subject, message, timestamp: now / 1_000 };
    this.pending.push({ eventId: body.event_id, webhookId: hook.id, userId: user.id, body, attempt: 1, dueAt: now, ...(once && { once }) });
    this.onDue?.();
  }

  private checkUrl(url: string): void {
    if (!this.deps.local && !url.startsWith("https://")) throw badRequest("invalid_url", "A webhook URL must be https:// (an emulator started for local use also takes http://).");
  }

  private owned(user: UserRecord, id: number): WebhookRecord {
    const hook = this.list(user).find((h) => h.id === id);
    if (!hook) throw notFound("not_found", `Webhook ${id} does not exist or is not yours.`);
    return hook;
  }
}

function newSecret(): string {
  return `whsec_${randomBytes(24).toString("base64url")}`;
}
