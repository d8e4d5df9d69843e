import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { WEBHOOK_HEADERS } from "../../sdk/schemas";
import { webhookSignature } from "../../sdk/webhooks";
import type { Clock } from "../domain/clock";
import type { PendingDelivery, Webhooks } from "../domain/webhooks";
import type { WebhookRecord } from "../domain/records";

/** A receiver has this long to answer (the vendor's docs). */
const TIMEOUT_MS = 10_000;
/** The shortest and the longest wait, in real time, before a running clock is looked at for deliveries due. */
const TICK_MS = 200;
const MAX_WAIT_MS = 60_000;

/**
 * Sends the deliveries the domain has due (emulator/domain/webhooks.ts): a signed POST each, as the service sends
 * them (emulator/WEBHOOKS.md). 2xx is done; 408, 429, 5xx, a timeout or no connection are tried again on the
 * schedule; 3xx and the other 4xx are given up at once. Looks when a delivery is queued, when the emulator's clock
 * is moved, and when the next attempt is due on a running clock.
 */
export class WebhookDeliverer {
  private timer: NodeJS.Timeout | undefined;
  private sending = new Set<Promise<void>>();
  private closed = false;
  private readonly unsubscribe: () => void;
  /** What was sent, newest last (the control API shows it): outcome by attempt. */
  readonly log: { eventId: string; webhookId: number; attempt: number; outcome: string }[] = [];

  constructor(
    private readonly webhooks: Webhooks,
    private readonly clock: Clock,
  ) {
    webhooks.onDue = () => this.look();
    this.unsubscribe = clock.onMove(() => this.look());
  }

  /** Sends what is due, and keeps looking while anything waits. */
  look(): void {
    if (this.closed) return;
    for (const { delivery, hook } of this.webhooks.takeDue()) {
      const sent = this.send(delivery, hook).finally(() => this.sending.delete(sent));
      this.sending.add(sent);
    }
    this.schedule();
  }

  /** Waits for the deliveries under way (a test's receiver, then its assertions). */
  async settled(): Promise<void> {
    while (this.sending.size) await Promise.all([...this.sending]);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    await this.settled();
  }

  /** On a running clock, a look when the next attempt is due (a moved clock looks by itself). */
  private schedule(): void {
    const due = this.webhooks.nextDue();
    if (this.timer || due === undefined || this.clock.reading().frozen) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.look();
    }, Math.min(Math.max(due - this.clock.now(), TICK_MS), MAX_WAIT_MS));
    this.timer.unref();
  }

  private async send(delivery: PendingDelivery, hook: WebhookRecord | undefined): Promise<void> {
    if (!hook) return; // deleted meanwhile: nothing to send to
    const outcome = await this.attempt(delivery, hook);
    this.log.push({ eventId: delivery.eventId, webhookId: hook.id, attempt: delivery.attempt, outcome: outcome.text });
    if (this.log.length > 1_000) this.log.splice(0, this.log.length - 1_000);
    if (outcome.retry && this.webhooks.retry(delivery)) this.schedule();
  }

  private async attempt(delivery: PendingDelivery, hook: WebhookRecord): Promise<{ text: string; retry: boolean }> {
    if (!this.webhooks.local && (await isPrivate(hook.url))) return { text: "refused: a private or loopback target", retry: false };
    const body = JSON.stringify(delivery.body);
    const timestamp = Math.floor(this.clock.now() / 1000);
    try {
      const res = await fetch(hook.url, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
        headers: {
          "content-type": "application/json",
          [WEBHOOK_HEADERS.eventId]: delivery.eventId,
          [WEBHOOK_HEADERS.attempt]: String(delivery.attempt),
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: webhookSignature(hook.secret, timestamp, body),
        },
        body,
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { text: `delivered (${res.status})`, retry: false };
      return { text: `answered ${res.status}`, retry: res.status === 408 || res.status === 429 || res.status >= 500 };
    } catch (error) {
      return { text: `failed: ${(error as Error).name === "TimeoutError" ? "no answer within 10 s" : (error as Error).message}`, retry: true };
    }
  }
}

/** Whether a URL's host is loopback, private or link-local (a name resolved first), as the live service refuses. */
async function isPrivate(url: string): Promise<boolean> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host) ? [host] : await lookup(host, { all: true }).then((all) => all.map((a) => a.address), () => []);
  return addresses.some((address) => /^(127\.|10\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.|0\.|::1$|f[cd]|fe80:|::ffff:127\.)/i.test(address));
}
