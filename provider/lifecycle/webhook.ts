import { z } from "zod";
import { deletedOrGone, GpuRentalError, Webhook, WebhookEventType, WebhookEventTypes, WebhookName, WebhookUrl } from "../../sdk";
import { describeResource } from "./describe";
import type { NamedType } from "./description";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";

/**
 * The Webhook kind: where the service POSTs the account's events, signed with the webhook's secret
 * (`/api/v0/webhooks`). The secret is shown at creation and rotation only: it is kept in the state as a secret output,
 * and a new `secretVersion` rotates it in place.
 */

const EVENT_TYPE: NamedType = {
  name: "WebhookEventType",
  description: "An event a webhook is sent.",
  values: {
    "client:low_credit": "The account's credit went low.",
    "client:outbid": "An interruptible instance was outbid and stopped.",
    "client:instance_started": "An instance was started.",
    "client:instance_stopped": "An instance was stopped.",
    "client:instance_deleted": "An instance was destroyed.",
  } satisfies Record<WebhookEventType, string>,
};

const DESCRIPTION =
  "A notification webhook of the account: the service POSTs the events it subscribes to, signed with its secret (check a delivery with the SDK's " +
  "`verifyWebhookDelivery`). At most 4 an account. Its URL, events and name change in place; a new `secretVersion` rotates its secret in " +
  "place (the old one signs nothing more). The service shows the secret at creation and rotation only: an imported webhook's `secret` is " +
  "null until a rotation.";

/** The service's rules of a webhook, as the SDK sends one (a name is never null here). */
const WebhookSpec = z.object({
  url: WebhookUrl.meta({ description: "Where deliveries go: an `https://` URL (the service refuses others, and private or loopback targets)." }),
  eventTypes: WebhookEventTypes.meta({ named: EVENT_TYPE, description: "The events it is sent, at least one." }),
  name: WebhookName.unwrap().optional().meta({ description: "Its name, at most 120 characters." }),
  secretVersion: z.number().int().optional().meta({ description: "Change it (1, 2, ...) to rotate the secret in place." }),
});
export type WebhookSpec = z.infer<typeof WebhookSpec>;

const WebhookOutputs = z.object({
  webhookId: z.int().meta({ description: "The webhook's id (also the resource's id)." }),
  secret: z.string().nullable().meta({ secret: true, description: "The secret deliveries are signed with: a secret output (null after an import or adoption, until a rotation)." }),
});
export type WebhookOutputs = z.infer<typeof WebhookOutputs>;

export const WEBHOOK: Kind<WebhookSpec, WebhookOutputs> = {
  description: describeResource({ name: "Webhook", description: DESCRIPTION, inputs: WebhookSpec, outputs: WebhookOutputs }),
  spec: specOf("Webhook", WebhookSpec),
  diff(olds, news, unknown) {
    const updates = (["url", "eventTypes", "name", "secretVersion"] as const).filter(
      (key) => (unknown !== undefined && news[key] === unknown) || JSON.stringify(olds[key] ?? null) !== JSON.stringify(news[key] ?? null),
    );
    return { changes: updates.length > 0, replaces: [], updates, deleteBeforeReplace: false };
  },
  async create(spec, op) {
    const made = await op.client.webhooks.create({ webhook_url: spec.url, event_types: spec.eventTypes, ...(spec.name !== undefined && { name: spec.name }) });
    return { id: String(made.id), outs: { ...spec, webhookId: made.id, secret: made.webhook_secret ?? null } };
  },
  async adopt(id, spec, op) {
    if (!(await op.client.webhooks.get(Number(id)))) throw new GpuRentalError(`Webhook ${id} cannot be adopted: the account has no webhook ${id}.`);
    return { id, outs: await declared(Number(id), spec, null, op) };
  },
  async read(id: string, props: Props, op: Operation) {
    const found = await op.client.webhooks.get(Number(id));
    return found ? { ...props, ...inputsOf(found), webhookId: found.id, secret: props.secret ?? null } : null;
  },
  async import(id: string, op: Operation) {
    const found = await op.client.webhooks.get(Number(id));
    if (!found) return null;
    return { inputs: inputsOf(found), outs: { ...inputsOf(found), webhookId: found.id, secret: null } };
  },
  async update(id, olds, spec, op) {
    const secret = (olds.secretVersion ?? null) !== (spec.secretVersion ?? null) ? ((await op.client.webhooks.rotateSecret(Number(id))).webhook_secret ?? null) : ((olds.secret as string | null) ?? null);
    return declared(Number(id), spec, secret, op);
  },
  async delete(id, _props, op) {
    await deletedOrGone(() => op.client.webhooks.delete(Number(id)));
  },
};

/** The webhook `id` set to the spec (`PUT`), its outputs with `secret`. */
async function declared(id: number, spec: WebhookSpec, secret: string | null, op: Operation): Promise<WebhookSpec & WebhookOutputs> {
  await op.client.webhooks.update(id, { webhook_url: spec.url, event_types: spec.eventTypes, name: spec.name ?? null });
  return { ...spec, webhookId: id, secret };
}

function inputsOf(found: Webhook): Record<string, unknown> {
  return { url: found.webhook_url, eventTypes: found.event_types, ...(found.name ? { name: found.name } : {}) };
}
