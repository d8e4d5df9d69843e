import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";
import { RESOURCE_DESCRIPTIONS, secretsOf } from "../sdk/resources/descriptions";
import { URN_INPUT } from "../sdk/resources/managed";
import type { ResourceKind } from "../sdk/resources/kinds";

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
 * as undefined (or the engine drops them), the account recorded by name, the resource's URN (its creations' tokens
 * are derived from it: the dynamic provider host gives `create` none), and the kind's secret outputs encrypted in
 * state.
 */
export function registration(
  kind: ResourceKind,
  name: string,
  args: object,
  opts: ResourceOptions,
): { props: Record<string, unknown>; options: pulumi.CustomResourceOptions } {
  const description = RESOURCE_DESCRIPTIONS[kind];
  const { account, ...options } = opts;
  const urn = pulumi.createUrn(name, `pulumi-nodejs:dynamic/gpu-rental:${kind}`, options.parent);
  const props = { ...Object.fromEntries(Object.keys(description.outputs).map((output) => [output, undefined])), ...args, account: account?.ref, [URN_INPUT]: urn };
  const additionalSecretOutputs = [...(options.additionalSecretOutputs ?? []), ...secretsOf(description)];
  return { props, options: { ...options, additionalSecretOutputs } };
}
