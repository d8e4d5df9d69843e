import { z } from "zod";

/**
 * The account's environment variables (`/api/v0/secrets/`, "env vars" in the service's client): each instance
 * created afterwards gets them in its environment. Keys are upper-cased by the service; values are secrets, which
 * a listing masks.
 */

/** A key as the service takes it: letters, digits and underscores, not starting with a digit (upper-cased on arrival). */
export const ENV_VAR_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The longest value the emulator takes (the live limit is not documented; `input_too_long` beyond it). */
export const ENV_VAR_MAX_VALUE = 4096;

/** `POST` and `PUT /api/v0/secrets/`: a key and its value. */
export const EnvVarRequest = z.object({ key: z.string().min(1), value: z.string() }).strict();
export type EnvVarRequest = z.infer<typeof EnvVarRequest>;

/** `DELETE /api/v0/secrets/`: the key, in the body (not the URL). */
export const EnvVarDeleteRequest = z.object({ key: z.string().min(1) }).strict();

/** The answer of a creation, change or deletion: `{success, msg}`. */
export const EnvVarResponse = z.looseObject({ success: z.boolean(), msg: z.string().optional() });

/** `GET /api/v0/secrets/`: `{success, secrets: {KEY: value}}`, each value masked (`*****`); no `secrets` reads as none. */
export const EnvVarListResponse = z.looseObject({ success: z.boolean().optional(), secrets: z.record(z.string(), z.string()).optional() });

/** A key as the service keeps it. */
export function envVarKey(key: string): string {
  return key.trim().toUpperCase();
}

/**
 * What the service refuses in a key and value, with its code (`invalid_characters`, `empty_input`,
 * `input_too_long`), or undefined: the emulator refuses with it, the provider says it at preview.
 */
export function envVarProblem(key: string, value: string): { code: string; message: string } | undefined {
  if (!ENV_VAR_KEY.test(key.trim())) return { code: "invalid_characters", message: `the key ${JSON.stringify(key)} must be letters, digits and underscores, not starting with a digit` };
  if (value === "") return { code: "empty_input", message: `the value of ${envVarKey(key)} is empty` };
  if (value.length > ENV_VAR_MAX_VALUE) return { code: "input_too_long", message: `the value of ${envVarKey(key)} is ${value.length} characters long: at most ${ENV_VAR_MAX_VALUE}` };
  return undefined;
}
