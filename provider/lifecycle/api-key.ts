import { z } from "zod";
import {
  ApiKey, createApiKeyOnce, CreateApiKeyRequest, deletedOrGone, GpuRentalClient, GpuRentalError, InterruptedError, nameWithoutToken as baseName,
  NotFoundError, PermissionSet, resourceToken, tokenOfApiKey,
} from "../../sdk";
import { interruptedCreation } from "./creation";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { changedKeys, definedOnly, sameValue, specOf } from "./spec";

/**
 * The ApiKey kind: an API key of the account, optionally scoped. Its value is shown once, at creation, and kept
 * as a secret output; a key's permissions cannot be edited, so every change is a new key.
 */

const DESCRIPTION =
  "An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`) before the old " +
  "one is revoked.";

const ApiKeySpec = z.object({
  name: CreateApiKeyRequest.shape.name.meta({ replaces: true, description: "The key's name." }),
  // Without it the key has full access, as the console's default.
  permissions: PermissionSet.optional().meta({
    replaces: true,
    tsType: "PermissionSet",
    description: "`{ api: { instance_read: {} } }`: the categories the key may use. Without it the key has full access.",
  }),
});
export type ApiKeySpec = z.infer<typeof ApiKeySpec>;

const SPEC = specOf("ApiKey", ApiKeySpec);

const ApiKeyOutputs = z.object({
  keyId: z.int().meta({ description: "The key's id (also the resource's id)." }),
  // Returned by the service once, at creation.
  key: z.string().nullable().meta({ secret: true, description: "The key's value, shown by the service once: a secret output (null when adopted or imported)." }),
  keyPrefix: z.string().nullable().meta({ description: "The first characters of the key, as the console shows them." }),
});
export type ApiKeyOutputs = z.infer<typeof ApiKeyOutputs>;

export interface ApiKeyDiff {
  changes: boolean;
  replaces: string[];
  /** The new key is issued before the old one is revoked, so whatever uses it can move over. */
  deleteBeforeReplace: boolean;
}

export const API_KEY: Kind<ApiKeySpec, ApiKeyOutputs> = {
  description: describeResource({ name: "ApiKey", description: DESCRIPTION, inputs: ApiKeySpec, outputs: ApiKeyOutputs }),
  spec: SPEC,
  diff: diffApiKeySpec,
  create: createApiKey,
  adopt: adoptApiKey,
  read: readApiKey,
  import: importApiKey,
  delete: deleteApiKey,
};

/** Every change replaces: the API has no way to edit a key. An empty name is no name. */
export function diffApiKeySpec(olds: Props, news: Props, unknown?: unknown): ApiKeyDiff {
  const replaces = changedKeys(SPEC.keys, olds, news, (key, value) => value ?? (key === "name" ? "" : null), unknown);
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/**
 * Issues the key (`POST /api/v0/auth/apikeys/`), named `<name>-<token>`: a key whose answer (with its value) was
 * lost is found by its token and revoked, and the key issued again; none is ever left live and unknown. With
 * `identity` (a Pulumi resource) the token is the resource's: a key an earlier, cut-off run issued for it is revoked
 * first (its value, shown once, is lost with that run).
 */
async function createApiKey(spec: ApiKeySpec, op: Operation): Promise<{ id: string; outs: ApiKeySpec & ApiKeyOutputs }> {
  const client = op.client;
  const token = op.identity && resourceToken(op.identity);
  if (token) {
    for (const key of (await client.apiKeys.list()).filter((k) => tokenOfApiKey(k) === token)) await revoke(client, key.id);
  }
  try {
    const { created } = await createApiKeyOnce(client, spec, { clock: op.clock, token, signal: op.signal });
    return { id: String(created.id), outs: { ...spec, ...outputsOf(created, created.key) } };
  } catch (error) {
    throw error instanceof InterruptedError ? interruptedCreation(error, "The API key's creation") : error;
  }
}

/** The key as it is now (`GET /api/v0/auth/apikeys/{id}/`), or null when it is revoked or gone. */
async function readApiKey(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & ApiKeyOutputs) | null> {
  const found = await op.client.apiKeys.get(Number(id));
  // The value is never shown again: the one kept in state stays.
  return found ? { ...props, ...outputsOf(found, props.key ?? null) } : null;
}

/**
 * Takes an existing key of the account under management (`adoptId`): it must have the declared permissions,
 * which cannot be edited. Its value was shown once, when it was made, so the `key` output of an adopted key is null.
 */
async function adoptApiKey(id: string, spec: ApiKeySpec, op: Operation): Promise<{ id: string; outs: ApiKeySpec & ApiKeyOutputs }> {
  const found = await op.client.apiKeys.get(Number(id));
  if (!found) throw new NotFoundError(`API key ${id} cannot be adopted: the account has no key ${id}. Check adoptId, and the account the resource uses.`);
  const declared = spec.permissions ?? null;
  if (!sameValue(declared, permissionSetOf(found))) {
    throw new GpuRentalError(
      `API key ${id} cannot be adopted as declared: its permissions are ${JSON.stringify(permissionSetOf(found))}, the program declares ` +
        `${JSON.stringify(declared)}. Declare its permissions (a key's permissions cannot be edited).`,
    );
  }
  return { id, outs: { ...spec, ...outputsOf(found, null) } };
}

/**
 * An existing key as `pulumi import` takes it: the inputs that declare it as it is (its name without a creation
 * token, its permissions), and its outputs; its value was shown once, so `key` is null. Null when it is gone.
 */
async function importApiKey(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const found = await op.client.apiKeys.get(Number(id));
  if (!found) return null;
  const inputs = definedOnly({ name: baseName(found.name) || undefined, permissions: permissionSetOf(found) ?? undefined });
  return { inputs, outs: { ...inputs, ...outputsOf(found, null) } };
}

/** Revokes the key; one already revoked or gone counts as deleted. */
async function deleteApiKey(id: string, _props: Props, op: Operation): Promise<void> {
  await revoke(op.client, Number(id));
}

function revoke(client: GpuRentalClient, id: number): Promise<void> {
  return deletedOrGone(() => client.apiKeys.delete(id));
}

/** A key's permission set; null for a full-access key (no set: `null`, or `false` as the vendor's description has it). */
function permissionSetOf(apiKey: ApiKey): Record<string, unknown> | null {
  return typeof apiKey.permissions === "object" ? apiKey.permissions : null;
}

function outputsOf(apiKey: ApiKey, key: string | null): ApiKeyOutputs {
  return { keyId: apiKey.id, key, keyPrefix: apiKey.key_prefix ?? null };
}
