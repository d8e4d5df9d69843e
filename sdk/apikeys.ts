import type { GpuRentalClient } from "./client";
import { foundOrNull } from "./errors";
import { ApiKey, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyRequest, CreateApiKeyResponse, SuccessResponse } from "./schemas";

/** Creates a key. Its value is in the answer this once: store it as a secret. */
export function createApiKey(client: GpuRentalClient, request: CreateApiKeyRequest = {}) {
  return client.call({ method: "POST", path: "/api/v0/auth/apikeys/", body: request, schema: CreateApiKeyResponse, idempotent: false });
}

export async function listApiKeys(client: GpuRentalClient): Promise<ApiKey[]> {
  return (await client.call({ method: "GET", path: "/api/v0/auth/apikeys/", schema: ApiKeyListResponse })).apikeys;
}

/** The key, or null when there is none with this id (or it is revoked). */
export async function getApiKey(client: GpuRentalClient, id: number): Promise<ApiKey | null> {
  return foundOrNull(async () => (await client.call({ method: "GET", path: `/api/v0/auth/apikeys/${id}/`, schema: ApiKeyResponse })).apikey);
}

/** Revokes a key: it is refused from then on. */
export async function deleteApiKey(client: GpuRentalClient, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/auth/apikeys/${id}/`, body: {}, schema: SuccessResponse });
}
