import { FastifyInstance } from "fastify";
import { CreateApiKeyRequest, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyResponse, PermissionSet, SuccessResponse } from "../../sdk/schemas";
import type { ApiKeyRecord, Permissions } from "../domain/records";
import { accepting, optionalField } from "./accepting";
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

/**
 * Key creation as the emulator takes it: the permission set names categories it knows (each with its
 * constraints object; `{}` is none). Without one the key has full access.
 */
const AcceptedCreate = accepting(CreateApiKeyRequest, {
  fields: {
    permissions: optionalField(PermissionSet),
  },
});

/** API key management (the live paths: docs/service-facts.md#paths-beyond-the-spec). */
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
    body: AcceptedCreate,
    response: CreateApiKeyResponse,
    handler: ({ principal, body }) => {
      const issued = market.accounts.createKey(principal, body.name ?? "", (body.permissions ?? null) as Permissions);
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
    refusals: ["not_found"],
    response: ApiKeyResponse,
    handler: ({ principal, params }) => ({ apikey: view(ownKey(principal.user.id, idParam(params, "id"))) }),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/auth/apikeys/:id/",
    permission: "user_write",
    refusals: ["not_found"],
    response: SuccessResponse,
    handler: ({ principal, params }) => {
      market.accounts.revokeKeyById(ownKey(principal.user.id, idParam(params, "id")).id);
      return { success: true };
    },
  });
}
