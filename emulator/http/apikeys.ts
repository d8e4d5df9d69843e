import { FastifyInstance } from "fastify";
import { CreateApiKeyRequest, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyResponse, SuccessResponse } from "../../sdk/schemas";
import { ApiKeyRecord } from "../domain/accounts";
import { notFound } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { idParam, route } from "./routes";

const view = (key: ApiKeyRecord) => ({
  id: key.id,
  name: key.name,
  permissions: key.permissions,
  key_prefix: key.prefix,
  created_at: key.createdAt / 1000,
});

/** API key management (the live paths of the service-facts note). */
export function registerApiKeys(app: FastifyInstance, market: Marketplace): void {
  const ownKey = (userId: number, id: number) => {
    const key = market.accounts.keyById(userId, id);
    if (!key) throw notFound("no_such_key", `API key ${id} does not exist.`);
    return key;
  };

  route(app, market, {
    method: "POST",
    url: "/api/v0/auth/apikeys/",
    permission: "user_write",
    body: CreateApiKeyRequest,
    response: CreateApiKeyResponse,
    handler: ({ principal, body }) => {
      const issued = market.accounts.createKey(principal, body.name ?? "", body.permissions ?? null);
      return { success: true, ...view(issued), key: issued.key };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/auth/apikeys/",
    permission: "user_read",
    response: ApiKeyListResponse,
    handler: ({ principal }) => ({ apikeys: market.accounts.keysOf(principal.user.id).map(view) }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/auth/apikeys/:id/",
    permission: "user_read",
    response: ApiKeyResponse,
    handler: ({ principal, params }) => ({ apikey: view(ownKey(principal.user.id, idParam(params, "id"))) }),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/auth/apikeys/:id/",
    permission: "user_write",
    response: SuccessResponse,
    handler: ({ principal, params }) => {
      market.accounts.revokeKeyById(ownKey(principal.user.id, idParam(params, "id")).id);
      return { success: true };
    },
  });
}
