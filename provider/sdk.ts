/** The engine's marker for a value not known yet (preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export type Sdk = typeof import("../sdk");

/**
 * Loads the SDK from the program's folder, where the provider host runs: a plain `require` here would resolve
 * from Pulumi's own module instead (the provider is re-loaded from its serialized text), which finds the SDK only
 * when it sits in the same node_modules.
 */
export function sdk(): Sdk {
  const { createRequire } = require("node:module");
  return createRequire(require("node:path").join(process.cwd(), "pulumi-program.js"))("gpu-rental/sdk");
}

/** Output names seeded as undefined in a resource's props: without them the engine would drop the outputs. */
export function seededOutputs(names: readonly string[]): Record<string, undefined> {
  return Object.fromEntries(names.map((name) => [name, undefined]));
}

/** The options with `names` added to `additionalSecretOutputs`: those outputs are encrypted in state. */
export function withSecretOutputs<T extends { additionalSecretOutputs?: string[] }>(opts: T, names: readonly string[]): T {
  return { ...opts, additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? []), ...names] };
}
