import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";
import { secretsOf } from "./lifecycle";
import { URN_INPUT } from "./lifecycle/managed";
import { REGISTRY } from "./lifecycle/registry";

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
 * The props and options a dynamic resource of `kind` is registered with: the declared args with the outputs seeded
 * as undefined (or the engine drops them), the kind's secret inputs made secrets even when the program passes them
 * in the clear (inputs are written to state too), the account recorded by name, the resource's URN (the kind of
 * every operation, and its creations' tokens, are derived from it: the dynamic provider host gives `create` none),
 * and the kind's secret outputs encrypted in state.
 */
export function registration(
  kind: string,
  name: string,
  args: object,
  opts: ResourceOptions,
): { props: Record<string, unknown>; options: pulumi.CustomResourceOptions } {
  const description = REGISTRY.kinds.get(kind)!.description;
  const { account, ...options } = opts;
  const urn = pulumi.createUrn(name, `pulumi-nodejs:dynamic/gpu-rental:${kind}`, options.parent);
  const secretInputs = Object.entries(args).map(([k, v]) => [k, description.inputs[k]?.secret && v !== undefined ? pulumi.secret(v) : v]);
  const props = {
    ...Object.fromEntries(Object.keys(description.outputs).map((output) => [output, undefined])),
    ...Object.fromEntries(secretInputs),
    account: account?.ref,
    [URN_INPUT]: urn,
  };
  const additionalSecretOutputs = [...(options.additionalSecretOutputs ?? []), ...secretsOf(description)];
  return { props, options: { ...options, additionalSecretOutputs } };
}
