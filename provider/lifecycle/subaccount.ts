import { z } from "zod";
import { GpuRentalError } from "../../sdk";
import { describeResource } from "./describe";
import { ADOPT_ID } from "./description";
import type { Kind } from "./kind";
import { specOf } from "./spec";

/**
 * The Subaccount kind: an account whose parent is the provider's (`POST /api/v0/users/`). The service has no call
 * that deletes one, so destroy drops it from the stack and says so; preview says it at creation.
 */

const DESCRIPTION =
  "An account of the service whose parent is this one (for a client team, or machines to host), with a key of its own. Every input " +
  "replaces it. The service cannot delete an account: destroy drops it from the stack and leaves it on the service, as preview says.";

const SubaccountSpec = z.object({
  email: z
    .email()
    .max(64)
    .refine((email) => !/@vast/i.test(email), "the service refuses an email of its own domain")
    .meta({ replaces: true, description: "Its email: an address, not of the service's own domain." }),
  username: z.string().min(1).max(64).meta({ replaces: true, description: "Its user name, at most 64 characters." }),
  password: z.string().min(1).meta({ replaces: true, secret: true, description: "Its password to log in to the console: kept secret, sent once." }),
  hostOnly: z.boolean().optional().meta({ replaces: true, default: false, description: "An account that hosts machines only." }),
});
export type SubaccountSpec = z.infer<typeof SubaccountSpec>;

const SubaccountOutputs = z.object({
  subaccountId: z.int().meta({ description: "The account's user id (also the resource's id)." }),
  keyId: z.int().nullable().meta({ description: "The id of its API key (the value goes to the account's owner, not to the stack)." }),
});
export type SubaccountOutputs = z.infer<typeof SubaccountOutputs>;

const KEPT = "the service has no call that deletes an account: destroy leaves it on the service, dropped from the stack";

export const SUBACCOUNT: Kind<SubaccountSpec, SubaccountOutputs> = {
  description: describeResource({
    name: "Subaccount",
    description: DESCRIPTION,
    inputs: SubaccountSpec,
    outputs: SubaccountOutputs,
    adoptId: ADOPT_ID.meta({ description: "Adopt a subaccount that exists (its user id) instead of creating one: destroy then drops it from the stack, and the service keeps it." }),
  }),
  spec: specOf("Subaccount", SubaccountSpec),
  diff(olds, news, unknown) {
    const replaces = (["email", "username", "password", "hostOnly"] as const).filter((key) => (unknown !== undefined && news[key] === unknown) || (olds[key] ?? false) !== (news[key] ?? false));
    return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
  },
  async create(spec, op) {
    const made = await op.client.subaccounts.create({ email: spec.email, username: spec.username, password: spec.password, hostOnly: spec.hostOnly });
    return { id: String(made.id), outs: { ...spec, subaccountId: made.id, keyId: made.keyId } };
  },
  async adopt(id, spec, op) {
    const found = (await op.client.subaccounts.list()).find((sub) => sub.id === Number(id));
    if (!found) throw new GpuRentalError(`Subaccount ${id} cannot be adopted: it is not a subaccount of this account.`);
    return { id, outs: { ...spec, subaccountId: found.id, keyId: found.key_id ?? null } };
  },
  async read(id, props, op) {
    const found = (await op.client.subaccounts.list()).find((sub) => sub.id === Number(id));
    return found ? { ...props, subaccountId: found.id, keyId: found.key_id ?? null } : null;
  },
  /** Refused: the service shows neither the email nor the name of a subaccount, so an import could declare nothing. */
  async import(id, op) {
    if (!(await op.client.subaccounts.list()).some((sub) => sub.id === Number(id))) return null;
    throw new GpuRentalError(`Subaccount ${id} cannot be imported: the service shows neither its email nor its name. Declare it with adoptId ${id} instead.`);
  },
  async delete(id, _props, op) {
    op.log(`subaccount ${id}: ${KEPT}`);
  },
  async warnings() {
    return [`${KEPT}.`];
  },
};
