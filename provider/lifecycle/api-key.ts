import { z } from "zod";
import { createApiKeyOnce } from "../workflows/create";
import { nameWithoutToken as baseName, resourceToken, tokenOfApiKey } from "../workflows/tokens";
import { InterruptedError } from "../workflows/interruption";
import { CreationContext, interruptedCreation } from "./creation";
import { ApiKey, CreateApiKeyRequest, PermissionSet } from "../schemas";
import { GpuRentalError, NotFoundError } from "../errors";
import { changedKeys, checkInputs, CheckFailure, clientOf, definedOnly, deletedOrGone, requireSpec, sameValue, WithClient } from "./spec";

/**
 * The Pulumi `ApiKey` resource: an API key of the account, optionally scoped. Its value is shown once, at
 * creation, and kept as a secret output; a key's permissions cannot be edited, so every change is a new key.
 */
export const ApiKeySpec = z
  .object({
    name: CreateApiKeyRequest.shape.name,
    /** `{api: {<category>: {}}}`; without it the key has full access, as the console's default. */
    permissions: PermissionSet.optional(),
  });
export type ApiKeySpec = z.infer<typeof ApiKeySpec>;

const SPEC_KEYS = ["name", "permissions"] as const;

export interface ApiKeyOutputs {
  keyId: number;
  /** The key's value: returned by the service once, at creation. Kept secret in state. */
  key: string | null;
  keyPrefix: string | null;
}

export interface ApiKeyDiff {
  changes: boolean;
  replaces: string[];
  /** The new key is issued before the old one is revoked, so whatever uses it can move over. */
  deleteBeforeReplace: boolean;
}

/** Every change replaces: the API has no way to edit a key. An empty name is no name. */
export function diffApiKeySpec(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown): ApiKeyDiff {
  const replaces = changedKeys(SPEC_KEYS, olds, news, (key, value) => value ?? (key === "name" ? "" : null), unknown);
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/** The provider's `check`. */
export function checkApiKeyInputs(news: Record<string, unknown>, unknown?: unknown): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  return checkInputs(ApiKeySpec, SPEC_KEYS, news, unknown);
}

/**
 * Issues the key (`POST /api/v0/auth/apikeys/`), named `<name>-<token>`: a key whose answer (with its value) was
 * lost is found by its token and revoked, and the key issued again; none is ever left live and unknown. With
 * `identity` (a Pulumi resource) the token is the resource's: a key an earlier, cut-off run issued for it is revoked
 * first (its value, shown once, is lost with that run).
 */
export async function createApiKeyFromSpec(input: unknown, options: WithClient & CreationContext = {}): Promise<{ id: string; outs: ApiKeySpec & ApiKeyOutputs }> {
  const spec = requireSpec("ApiKey", ApiKeySpec, input);
  const client = clientOf(options);
  const token = options.identity && resourceToken(options.identity);
  if (token) {
    for (const key of (await client.apiKeys.list()).filter((k) => tokenOfApiKey(k) === token)) await deleteApiKeyById(String(key.id), { client });
  }
  try {
    const { created } = await createApiKeyOnce(client, spec, { token, signal: options.signal });
    return { id: String(created.id), outs: { ...spec, ...outputsOf(created, created.key) } };
  } catch (error) {
    throw error instanceof InterruptedError ? interruptedCreation(error, "The API key's creation") : error;
  }
}

/** The key as it is now (`GET /api/v0/auth/apikeys/{id}/`), or null when it is revoked or gone. */
export async function readApiKeyState(
  id: string,
  props: Readonly<Record<string, any>>,
  options: WithClient = {},
): Promise<(Record<string, unknown> & ApiKeyOutputs) | null> {
  const found = await clientOf(options).apiKeys.get(Number(id));
  // The value is never shown again: the one kept in state stays.
  return found ? { ...props, ...outputsOf(found, props.key ?? null) } : null;
}

/**
 * Takes an existing key of the account under management (`adoptId`): it must have the declared permissions,
 * which cannot be edited. Its value was shown once, when it was made, so the `key` output of an adopted key is null.
 */
export async function adoptApiKey(id: string, input: unknown, options: WithClient = {}): Promise<{ id: string; outs: ApiKeySpec & ApiKeyOutputs }> {
  const spec = requireSpec("ApiKey", ApiKeySpec, input);
  const found = await clientOf(options).apiKeys.get(Number(id));
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
export async function importApiKey(id: string, options: WithClient = {}): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const found = await clientOf(options).apiKeys.get(Number(id));
  if (!found) return null;
  const inputs = definedOnly({ name: baseName(found.name) || undefined, permissions: permissionSetOf(found) ?? undefined });
  return { inputs, outs: { ...inputs, ...outputsOf(found, null) } };
}

/** Revokes the key; one already revoked or gone counts as deleted. */
export async function deleteApiKeyById(id: string, options: WithClient = {}): Promise<void> {
  await deletedOrGone(() => clientOf(options).apiKeys.delete(Number(id)));
}

/** A key's permission set; null for a full-access key (no set: `null`, or `false` as the vendor's description has it). */
function permissionSetOf(apiKey: ApiKey): Record<string, unknown> | null {
  return typeof apiKey.permissions === "object" ? apiKey.permissions : null;
}

function outputsOf(apiKey: ApiKey, key: string | null): ApiKeyOutputs {
  return { keyId: apiKey.id, key, keyPrefix: apiKey.key_prefix ?? null };
}
