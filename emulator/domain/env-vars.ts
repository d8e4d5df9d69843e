import { envVarKey, envVarProblem } from "../../sdk/schemas";
import type { UserRecord } from "./records";
import { badRequest } from "./errors";

/**
 * How many variables an account may hold. The live service has a limit (`max_secrets`) whose number is not
 * documented: this one is the emulator's choice (docs/emulator.md).
 */
export const MAX_ENV_VARS = 50;

/**
 * The account's environment variables (`/api/v0/secrets/`): keys upper-cased, values kept to be handed to every
 * instance created afterwards (an instance keeps those it was created with; its own `env` wins on a clash).
 */
export const envVars = {
  of(user: UserRecord): Record<string, string> {
    return user.envVars ?? {};
  },

  create(user: UserRecord, key: string, value: string): string {
    const name = checked(key, value);
    const vars = envVars.of(user);
    if (Object.hasOwn(vars, name)) throw badRequest("existing_key", `The environment variable ${name} already exists: change it with PUT /api/v0/secrets/.`);
    if (Object.keys(vars).length >= MAX_ENV_VARS) throw badRequest("max_secrets", `An account holds at most ${MAX_ENV_VARS} environment variables: delete one first.`);
    user.envVars = { ...vars, [name]: value };
    return name;
  },

  update(user: UserRecord, key: string, value: string): string {
    const name = checked(key, value);
    existing(user, name);
    user.envVars = { ...envVars.of(user), [name]: value };
    return name;
  },

  remove(user: UserRecord, key: string): string {
    const name = envVarKey(key);
    existing(user, name);
    const { [name]: _removed, ...rest } = envVars.of(user);
    user.envVars = rest;
    return name;
  },
};

/** The key as kept, once the key and value pass the service's rules. */
function checked(key: string, value: string): string {
  const problem = envVarProblem(key, value);
  if (problem) throw badRequest(problem.code, `${problem.message.charAt(0).toUpperCase()}${problem.message.slice(1)}.`);
  return envVarKey(key);
}

function existing(user: UserRecord, name: string): void {
  if (!Object.hasOwn(envVars.of(user), name)) throw badRequest("nonexistent_key", `The account has no environment variable ${name}.`);
}
