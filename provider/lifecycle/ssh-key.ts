import { z } from "zod";
import { deletedOrGone, GpuRentalError, keyMaterial, NotFoundError, OpenSshPublicKey, publicKeyOf, sameKey, SshKey } from "../../sdk";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";

/**
 * The SshKey kind: a public key registered on the account (`/api/v0/ssh/`). A key is its material: the service
 * answers a key it has already when it is sent again, so a key carries no creation token. A creation cut off after
 * the service registered the key is resolved by the material instead: the next `up` finds the key registered and
 * takes it over (as it takes over one registered by hand; preview says so first).
 */

const DESCRIPTION =
  "An SSH public key registered on the account: instances created after it take it (an Instance's `sshKeys` reach an instance " +
  "that exists already, or one not on the account). A key is its material: declaring one the account has already (registered " +
  "by hand, or by a run cut off before its state learnt of it) takes that key over, and destroy removes it. A new comment " +
  "changes the key in place; other key material registers another key.";

const SshKeySpec = z.object({
  publicKey: OpenSshPublicKey.meta({
    description:
      "One OpenSSH public key line, `ssh-ed25519 AAAA... me@laptop` (the `.pub` file). Refused at preview when it is not one " +
      "(a private key is refused by name).",
  }),
});
export type SshKeySpec = z.infer<typeof SshKeySpec>;

const SshKeyOutputs = z.object({ sshKeyId: z.int().meta({ description: "The key's id on the account (also the resource's id)." }) });
export type SshKeyOutputs = z.infer<typeof SshKeyOutputs>;

export const SSH_KEY: Kind<SshKeySpec, SshKeyOutputs> = {
  description: describeResource({ name: "SshKey", description: DESCRIPTION, inputs: SshKeySpec, outputs: SshKeyOutputs }),
  spec: specOf("SshKey", SshKeySpec),
  diff: diffSshKey,
  create: createSshKey,
  adopt: adoptSshKey,
  read: readSshKey,
  import: importSshKey,
  update: updateSshKey,
  delete: deleteSshKey,
  warnings: sshKeyWarnings,
};

/** Other key material replaces the key; a new comment (the same material) is changed in place. Space around the line is no change. */
function diffSshKey(olds: Props, news: Props, unknown?: unknown) {
  if (unknown !== undefined && news.publicKey === unknown) return { changes: true, replaces: ["publicKey"], deleteBeforeReplace: false };
  const same = lineOf(olds.publicKey) === lineOf(news.publicKey);
  const replaces = same || sameKey(olds.publicKey, news.publicKey) ? [] : ["publicKey"];
  return { changes: !same, replaces, updates: same || replaces.length ? [] : ["publicKey"], deleteBeforeReplace: false };
}

/**
 * Registers the key (`POST /api/v0/ssh/`), or takes over the account's key of the same material: one a cut-off run
 * registered, or one registered by hand.
 */
async function createSshKey(spec: SshKeySpec, op: Operation): Promise<{ id: string; outs: SshKeySpec & SshKeyOutputs }> {
  const registered = await registeredAs(spec.publicKey, op);
  if (registered) {
    op.log(`SSH key ${registered.id} of this key material is registered already: taken over (destroy removes it)`);
    return { id: String(registered.id), outs: await declared(registered, spec, op) };
  }
  const added = await op.client.sshKeys.add(spec.publicKey.trim());
  return { id: String(added.id), outs: await declared(added, spec, op) };
}

/** Takes the account's key `id` under management: it must be the declared key (its comment is changed to match). */
async function adoptSshKey(id: string, spec: SshKeySpec, op: Operation): Promise<{ id: string; outs: SshKeySpec & SshKeyOutputs }> {
  const found = await keyById(id, op);
  if (!found) throw new NotFoundError(`SSH key ${id} cannot be adopted: the account has no SSH key ${id}. Check adoptId, and the account the resource uses.`);
  if (!sameKey(publicKeyOf(found), spec.publicKey)) {
    throw new GpuRentalError(
      `SSH key ${id} cannot be adopted as declared: it is ${describeKey(publicKeyOf(found))}, the program declares ${describeKey(spec.publicKey)}. ` +
        "Declare the key it is (its public key line).",
    );
  }
  return { id, outs: await declared(found, spec, op) };
}

/** The key as the account has it, or null when it was removed (refresh then drops it from the stack). */
async function readSshKey(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & SshKeyOutputs) | null> {
  const found = await keyById(id, op);
  if (!found) return null;
  // The line as the account has it now: a comment changed by hand shows as a change the next up reverts.
  const line = publicKeyOf(found);
  const changed = line && sameKey(line, props.publicKey) && line !== lineOf(props.publicKey);
  return { ...props, publicKey: changed ? line : props.publicKey, sshKeyId: found.id };
}

/** An existing key as `pulumi import` takes it: its line as the account has it. Null when there is no such key. */
async function importSshKey(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const found = await keyById(id, op);
  const line = found && publicKeyOf(found);
  if (!found || !line) return null;
  return { inputs: { publicKey: line }, outs: { publicKey: line, sshKeyId: found.id } };
}

/** A new comment: the key's line is replaced in place (`PUT /api/v0/ssh/{id}/`). */
async function updateSshKey(id: string, _olds: Props, spec: SshKeySpec, op: Operation): Promise<SshKeyOutputs & SshKeySpec> {
  const found = await keyById(id, op);
  if (!found) throw new GpuRentalError(`SSH key ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  return declared(found, spec, op);
}

/** Removes the key from the account; one already gone counts as removed. Instances that took it keep it. */
async function deleteSshKey(id: string, _props: Props, op: Operation): Promise<void> {
  await deletedOrGone(() => op.client.sshKeys.delete(Number(id)));
}

/** What preview can say of a creation: that it takes over a key the account has already. */
async function sshKeyWarnings(news: Props, unknown: unknown, op: Operation): Promise<string[]> {
  if (typeof news.publicKey !== "string" || news.publicKey === unknown) return [];
  const registered = await registeredAs(news.publicKey, op);
  return registered
    ? [`the account has this key already (SSH key ${registered.id}): up takes it over, and destroy removes it from the account.`]
    : [];
}

/** The outputs of `key` made as declared: its line set to the declared one when only the comment differs. */
async function declared(key: SshKey, spec: SshKeySpec, op: Operation): Promise<SshKeySpec & SshKeyOutputs> {
  const line = spec.publicKey.trim();
  if (publicKeyOf(key) !== line) await op.client.sshKeys.update(key.id, line);
  return { ...spec, sshKeyId: key.id };
}

function lineOf(text: unknown): unknown {
  return typeof text === "string" ? text.trim() : text;
}

async function registeredAs(publicKey: string, op: Operation): Promise<SshKey | undefined> {
  return (await op.client.sshKeys.list()).find((key) => sameKey(publicKeyOf(key), publicKey));
}

async function keyById(id: string, op: Operation): Promise<SshKey | undefined> {
  return (await op.client.sshKeys.list()).find((key) => key.id === Number(id));
}

/** A key as messages show it: its type and the end of its material, never more. */
function describeKey(line: string | null | undefined): string {
  const material = keyMaterial(line);
  return material ? `${material.split(" ")[0]} ...${material.slice(-12)}` : "not a public key";
}
