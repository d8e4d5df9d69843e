import type { Caller } from "./call";
import { foundOrNull } from "./errors";
import { ApiKey, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyRequest, CreateApiKeyResponse, DeleteApiKeyResponse } from "./schemas";

/** Creates a key. Its value is in the answer this once: store it as a secret. */
function createApiKey(client: Caller, request: CreateApiKeyRequest = {}) {
  return client.call({ method: "POST", path: "/api/v0/auth/apikeys/", body: request, schema: CreateApiKeyResponse, idempotent: false });
}

async function listApiKeys(client: Caller): Promise<ApiKey[]> {
  return (await client.call({ method: "GET", path: "/api/v0/auth/apikeys/", schema: ApiKeyListResponse })).apikeys;
}

/** The key, or null when there is none with this id (or it is revoked). */
async function getApiKey(client: Caller, id: number): Promise<ApiKey | null> {
  return foundOrNull(async () => (await client.call({ method: "GET", path: `/api/v0/auth/apikeys/${id}/`, schema: ApiKeyResponse })).apikey);
}

/** Revokes a key: it is refused from then on. */
async function deleteApiKey(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/auth/apikeys/${id}/`, schema: DeleteApiKeyResponse });
}

/** `client.apiKeys`: the account's API keys; a key's value is in the answer of `create` only. */
export function apiKeysApi(client: Caller) {
  return {
    create: (request?: CreateApiKeyRequest) => createApiKey(client, request),
    list: () => listApiKeys(client),
    get: (id: number) => getApiKey(client, id),
    delete: (id: number) => deleteApiKey(client, id),
  };
}
