import { z } from "zod";
import { deletedOrGone, envVarKey, envVarProblem, GpuRentalError, NotFoundError } from "../../sdk";
import { describeResource } from "./describe";
import type { Imported, Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";

/**
 * The EnvVar kind: a variable of the account (`/api/v0/secrets/`), which every instance created afterwards gets in
 * its environment. A variable is its name (upper-cased by the service, which is its id); its value is a secret the
 * service never shows again, so a variable the account has already (set by hand, or by a run cut off before its
 * state learnt of it) is taken over by its name, its value set to the declared one (preview says so first).
 */

const DESCRIPTION =
  "An environment variable of the account (`HF_TOKEN`, `WANDB_API_KEY`): every instance created after it gets it in its " +
  "processes' environment (an instance's own `env` wins on a clash); instances keep the value they were created with. A new " +
  "value is set in place; another name makes another variable. Declaring a name the account has already takes that variable " +
  "over, its value set to the declared one; `pulumi import` declares the value the service shows (masked as `*****`: put the real value's source " +
  "in its place, and the next up sets it), and " +
  "destroy deletes it.";

/** The refusals of the service, said at preview and naming the input: no call is made with a variable it refuses. */
const EnvVarSpec = z
  .object({
    name: z.string().min(1).meta({
      description:
        "The variable's name: letters, digits and underscores, not starting with a digit. The service keeps it upper-cased " +
        "(`hf_token` is `HF_TOKEN`).",
    }),
    value: z.string().meta({
      secret: true,
      description: "The variable's value, at most 4,096 characters: always kept secret (the service shows it to no one, masked as `*****`).",
    }),
  })
  .superRefine(({ name, value }, ctx) => {
    const problem = envVarProblem(name, value);
    if (problem) ctx.addIssue({ code: "custom", path: [problem.code === "invalid_characters" ? "name" : "value"], message: problem.message });
  });
export type EnvVarSpec = z.infer<typeof EnvVarSpec>;

const EnvVarOutputs = z.object({ key: z.string().meta({ description: "The name as the service keeps it, upper-cased (also the resource's id)." }) });
export type EnvVarOutputs = z.infer<typeof EnvVarOutputs>;

export const ENV_VAR: Kind<EnvVarSpec, EnvVarOutputs> = {
  // A variable is taken over by its name, not by adoptId.
  description: describeResource({ name: "EnvVar", description: DESCRIPTION, inputs: EnvVarSpec, outputs: EnvVarOutputs, adoptId: false }),
  spec: specOf("EnvVar", EnvVarSpec),
  diff: diffEnvVar,
  create: createEnvVar,
  adopt: adoptEnvVar,
  read: readEnvVar,
  import: importEnvVar,
  update: updateEnvVar,
  delete: deleteEnvVar,
  warnings: envVarWarnings,
};

/**
 * Another name replaces the variable (the old one deleted first: two of one name cannot be); a new value is set in
 * place, and so is the name's case (the service keeps one name for both).
 */
function diffEnvVar(olds: Props, news: Props, unknown?: unknown) {
  const renamed = news.name === unknown || keyOf(olds.name) !== keyOf(news.name);
  const updates = [...(olds.name !== news.name ? ["name"] : []), ...(news.value === unknown || olds.value !== news.value ? ["value"] : [])];
  return { changes: renamed || updates.length > 0, replaces: renamed ? ["name"] : [], updates: renamed ? [] : updates, deleteBeforeReplace: renamed };
}

/** Creates the variable, or takes over the account's variable of that name (a cut-off run's, or one set by hand). */
async function createEnvVar(spec: EnvVarSpec, op: Operation): Promise<{ id: string; outs: EnvVarSpec & EnvVarOutputs }> {
  const key = envVarKey(spec.name);
  if (await exists(key, op)) {
    op.log(`environment variable ${key} is on the account already: taken over, its value set (destroy deletes it)`);
    await op.client.envVars.update(key, spec.value);
  } else {
    await op.client.envVars.create(key, spec.value);
  }
  return { id: key, outs: { ...spec, key } };
}

/** Takes the account's variable `id` (its name) under management, its value set to the declared one. */
async function adoptEnvVar(id: string, spec: EnvVarSpec, op: Operation): Promise<{ id: string; outs: EnvVarSpec & EnvVarOutputs }> {
  if (envVarKey(id) !== envVarKey(spec.name)) throw new GpuRentalError(`Environment variable ${id} cannot be adopted as ${envVarKey(spec.name)}: declare its name.`);
  if (!(await exists(envVarKey(id), op))) throw new NotFoundError(`Environment variable ${id} cannot be adopted: the account has none of that name.`);
  await op.client.envVars.update(envVarKey(id), spec.value);
  return { id: envVarKey(id), outs: { ...spec, key: envVarKey(id) } };
}

/** The state as it was while the account has the variable (its value cannot be read back), or null when it is gone. */
async function readEnvVar(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & EnvVarOutputs) | null> {
  return (await exists(id, op)) ? { ...props, key: id } : null;
}

/**
 * `pulumi import` of a variable: its name, and its value as the service shows it, which is the mask `*****` where
 * it masks values (the emulator does; the public client's `show env-vars -s` suggests the live service may not).
 * The printed code then declares the mask: put the real value's source in its place, and the next up sets it.
 */
async function importEnvVar(id: string, op: Operation): Promise<Imported | null> {
  const key = envVarKey(id);
  const shown = (await op.client.envVars.list())[key];
  if (shown === undefined) return null;
  op.log(`${key}: the service shows its value as ${JSON.stringify(shown)}; declare the real value's source in its place, and the next up sets it`);
  const inputs = { name: key, value: shown };
  return { inputs, outs: { ...inputs, key } };
}

/** Sets a new value (a name of another case only changes the state); the outputs are the declared variable's, as a creation's. */
async function updateEnvVar(id: string, olds: Props, spec: EnvVarSpec, op: Operation): Promise<EnvVarSpec & EnvVarOutputs> {
  if (olds.value !== spec.value) await op.client.envVars.update(id, spec.value);
  return { ...spec, key: id };
}

/** Deletes the variable; one already gone counts as deleted. Instances created with it keep it. */
async function deleteEnvVar(id: string, _props: Props, op: Operation): Promise<void> {
  await deletedOrGone(() => op.client.envVars.delete(id));
}

/** What preview can say of a creation: that it takes over a variable the account has already. */
async function envVarWarnings(news: Props, unknown: unknown, op: Operation): Promise<string[]> {
  if (typeof news.name !== "string" || news.name === unknown) return [];
  const key = envVarKey(news.name);
  return (await exists(key, op)) ? [`the account has the environment variable ${key} already: up takes it over and sets its value, and destroy deletes it.`] : [];
}

function keyOf(name: unknown): unknown {
  return typeof name === "string" ? envVarKey(name) : name;
}

async function exists(key: string, op: Operation): Promise<boolean> {
  return Object.hasOwn(await op.client.envVars.list(), key);
}
