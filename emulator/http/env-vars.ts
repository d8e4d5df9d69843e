import { FastifyInstance } from "fastify";
import { EnvVarDeleteRequest, EnvVarListResponse, EnvVarRequest, EnvVarResponse } from "../../sdk/schemas";
import { envVars } from "../domain/env-vars";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** What no schema can say: the service's rules of keys and values, and of the account's variables. */
const RULES =
  "a key is letters, digits and underscores, not starting with a digit (invalid_characters); a value is not empty (empty_input) nor too long " +
  "(input_too_long); a creation of a key that exists (existing_key), beyond the account's limit (max_secrets), or a change or deletion of a key " +
  "that does not (nonexistent_key) is refused";

/** A body without its key or value is `missing_input`, the service's word for it. */
const ERRORS = { invalidBody: "missing_input" };

/**
 * The account's environment variables (`/api/v0/secrets/`, as the vendor documents them and the public client
 * calls them): each answer is `{success, msg}`, the listing `{success, secrets}` with every value masked, and a
 * deletion names its key in the body.
 */
export function registerEnvVars(app: FastifyInstance, market: Marketplace): void {
  // A creation and a change take the same body and answer alike; each keeps its own rule of what must exist.
  const writes = [
    { method: "POST", change: envVars.create, done: "created" },
    { method: "PUT", change: envVars.update, done: "updated" },
  ] as const;
  for (const { method, change, done } of writes) {
    route(app, market, {
      method,
      url: "/api/v0/secrets/",
      permission: "user_write",
      body: EnvVarRequest,
      response: EnvVarResponse,
      rules: RULES,
      errors: ERRORS,
      handler: ({ principal, body }) => ({ success: true, msg: `Environment variable ${change(principal.user, body.key, body.value)} ${done}.` }),
    });
  }

  route(app, market, {
    method: "GET",
    url: "/api/v0/secrets/",
    permission: "user_read",
    response: EnvVarListResponse,
    handler: ({ principal }) => ({ success: true, secrets: Object.fromEntries(Object.keys(envVars.of(principal.user)).map((key) => [key, "*****"])) }),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/secrets/",
    permission: "user_write",
    body: EnvVarDeleteRequest,
    response: EnvVarResponse,
    rules: RULES,
    errors: ERRORS,
    handler: ({ principal, body }) => ({ success: true, msg: `Environment variable ${envVars.remove(principal.user, body.key)} deleted.` }),
  });
}
