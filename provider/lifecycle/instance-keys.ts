import { z } from "zod";
import { GpuRentalClient, keyMaterial, OpenSshPublicKey, publicKeyOf, sameKey } from "../../sdk";

/**
 * The SSH keys an instance declares (`sshKeys` of Instance and GpuFleet): public keys attached to it after it is
 * created (`POST /api/v0/instances/{id}/ssh/`), so it can be logged into with a key that is not the account's, or
 * that the account did not have when it was created. A change attaches the keys added and detaches those removed
 * (`DELETE /api/v0/instances/{id}/ssh/{key_id}/`), in place.
 */

export const SshKeysSpec = z
  .array(OpenSshPublicKey)
  .max(100, "at most 100 SSH keys")
  .optional()
  .meta({
    description:
      "Public keys (one OpenSSH line each) attached to the instance once it is created, besides the account's keys it takes at " +
      "creation: log in with any of them. Changed in place: keys added are attached, keys removed are detached (even one the " +
      "instance also took from the account). Each is refused at preview when it is not one OpenSSH public key line.",
  });

/** The keys as compared: their material, once each, in one order (a new comment or order is no change). */
export function keySet(keys: unknown): string[] {
  const lines = Array.isArray(keys) ? keys.filter((k): k is string => typeof k === "string") : [];
  return [...new Set(lines.map((line) => keyMaterial(line) ?? line))].sort();
}

/** Attaches every key to every instance, together. */
export async function attachKeys(client: GpuRentalClient, instanceIds: readonly number[], keys: readonly string[] | undefined): Promise<void> {
  if (!keys?.length) return;
  await Promise.all(instanceIds.flatMap((id) => keys.map((key) => client.sshKeys.attach(id, key.trim()))));
}

/**
 * Makes the instances' attached keys go from `olds` to `news`: the keys added are attached, and each key removed
 * is detached by the id the instance's key listing gives it (one listing an instance). `attachAll`: every key of
 * `news` is attached (a creation cut off before its keys were).
 */
export async function changeKeys(
  client: GpuRentalClient, instanceIds: readonly number[], olds: unknown, news: readonly string[] | undefined, attachAll = false,
): Promise<void> {
  const before = Array.isArray(olds) ? olds.filter((k): k is string => typeof k === "string") : [];
  const after = news ?? [];
  const added = attachAll ? after : after.filter((key) => !before.some((old) => sameKey(old, key)));
  const removed = before.filter((old) => !after.some((key) => sameKey(old, key)));
  await attachKeys(client, instanceIds, added);
  if (!removed.length) return;
  await Promise.all(
    instanceIds.map(async (id) => {
      const attached = await client.sshKeys.ofInstance(id);
      const ids = attached.filter((key) => removed.some((old) => sameKey(old, publicKeyOf(key)))).map((key) => key.id);
      for (const keyId of ids) await client.sshKeys.detach(id, keyId);
    }),
  );
}
