import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";

/** The options of every gpu-rental resource: Pulumi's own, plus the account the resource lives in. */
export interface ResourceOptions extends pulumi.CustomResourceOptions {
  /** The account to create it in; default the provider's account (`gpu-rental:apiKey`). */
  account?: Account;
}

/** The inputs every gpu-rental resource takes besides its own. */
export interface CommonArgs {
  /**
   * Adopt an object that already exists (made elsewhere: by hand, by a script, by another stack) instead of
   * creating one: its id. The object must match what the resource declares where that cannot be changed; the
   * rest is changed to match. From then on it is managed like any other: `pulumi destroy` deletes it. The id
   * matters only when the resource is created; it can be left in the program or removed afterwards.
   */
  adoptId?: pulumi.Input<number>;
}

/**
 * The props and options a dynamic resource is registered with: the declared args with the outputs seeded as
 * undefined (or the engine drops them), the account recorded by name, and `secretOutputs` encrypted in state.
 */
export function registration(
  outputs: readonly string[],
  args: object,
  opts: ResourceOptions,
  secretOutputs: readonly string[] = [],
): { props: Record<string, unknown>; options: pulumi.CustomResourceOptions } {
  const { account, ...options } = opts;
  const props = { ...Object.fromEntries(outputs.map((name) => [name, undefined])), ...args, account: account?.ref };
  return { props, options: { ...options, additionalSecretOutputs: [...(options.additionalSecretOutputs ?? []), ...secretOutputs] } };
}
