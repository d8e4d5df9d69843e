import type { Caller } from "./call";
import { envVarKey, EnvVarListResponse, EnvVarResponse } from "./schemas";

/**
 * Adds a variable to the account (its key upper-cased): instances created from then on get it. A key that exists
 * is refused (`existing_key`, a BadRequestError): change it with `update`. Not retried after a failure that may
 * have created it, which a second try would then refuse.
 */
async function createEnvVar(client: Caller, key: string, value: string): Promise<string> {
  await client.call({ method: "POST", path: "/api/v0/secrets/", body: { key, value }, schema: EnvVarResponse });
  return envVarKey(key);
}

/** The account's variables by key, each value masked as the service shows it (`*****`): values are never read back. */
async function listEnvVars(client: Caller): Promise<Record<string, string>> {
  return (await client.call({ method: "GET", path: "/api/v0/secrets/", schema: EnvVarListResponse })).secrets ?? {};
}

/** Changes a variable's value; instances already created keep the value they got. A key the account lacks is a NotFoundError. */
async function updateEnvVar(client: Caller, key: string, value: string): Promise<void> {
  await client.call({ method: "PUT", path: "/api/v0/secrets/", body: { key, value }, schema: EnvVarResponse, idempotent: true });
}

/** Deletes a variable (its key in the body, as the service takes it). A key the account lacks is a NotFoundError. */
async function deleteEnvVar(client: Caller, key: string): Promise<void> {
  await client.call({ method: "DELETE", path: "/api/v0/secrets/", body: { key }, schema: EnvVarResponse, idempotent: true });
}

/** `client.envVars`: the account's environment variables, which every instance created afterwards gets. */
export function envVarsApi(client: Caller) {
  return {
    create: (key: string, value: string) => createEnvVar(client, key, value),
    list: () => listEnvVars(client),
    update: (key: string, value: string) => updateEnvVar(client, key, value),
    delete: (key: string) => deleteEnvVar(client, key),
  };
}
