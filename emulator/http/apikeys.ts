import { FastifyInstance } from "fastify";
import { CreateApiKeyRequest, ApiKeyListResponse, ApiKeyResponse, CreateApiKeyResponse, PermissionSet, SuccessResponse } from "../../sdk/schemas";
import type { ApiKeyRecord, Permissions, UserRecord } from "../domain/records";
import { accepting, optionalField } from "./accepting";
import { notFound } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { idParam, route } from "./routes";

/**
 * A key as the listing shows it, with the fields the vendor lists (docs/service-facts.md#records-as-the-vendor-describes-them):
 * its user, its rights in a word (`all`, or its permission categories), and its team, when its account is one.
 */
const view = (key: ApiKeyRecord, owner?: UserRecord) => ({
  id: key.id,
  name: key.name,
  permissions: key.permissions,
  key_prefix: key.prefix,
  created_at: key.createdAt / 1000,
  user_id: key.userId,
  rights: key.permissions ? Object.keys(key.permissions.api ?? {}).join(",") : "all",
  team_id: owner?.team ? owner.id : null,
  team_name: owner?.team?.name ?? null,
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
    // A bad permission set is `invalid_permissions`, the code the vendor's description names (docs/service-facts.md#records-as-the-vendor-describes-them).
    errors: { fields: { permissions: "invalid_permissions" } },
    response: CreateApiKeyResponse,
    handler: ({ principal, body }) => {
      const issued = market.accounts.createKey(principal, body.name ?? "", (body.permissions ?? null) as Permissions);
      return { success: true, ...view(issued, principal.user), key: issued.key };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/auth/apikeys/",
    permission: "user_read",
    response: ApiKeyListResponse,
    handler: ({ principal }) => ({ apikeys: market.accounts.keysOf(principal.user.id).map((key) => view(key, principal.user)) }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/auth/apikeys/:id/",
    permission: "user_read",
    refusals: ["not_found"],
    response: ApiKeyResponse,
    handler: ({ principal, params }) => ({ apikey: view(ownKey(principal.user.id, idParam(params, "id")), principal.user) }),
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
