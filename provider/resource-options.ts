import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";
import { URN_INPUT } from "./lifecycle/urn-input";
import { dynamicType, PROVIDER_KEY, PROVIDER_MODULE } from "./sdk-provider";

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
 * What registering a resource of a kind needs of the kind's description, written into its generated class (so a
 * program loads none of the lifecycle, the SDK and their dependencies, which only the provider host runs).
 */
export interface KindRegistration {
  name: string;
  outputs: readonly string[];
  /** Its secret inputs. */
  secretInputs: readonly string[];
  /** Its secret inputs and outputs, encrypted in state. */
  secrets: readonly string[];
}

/**
 * The type, props and options a dynamic resource of `kind` is registered with: the declared args with the outputs seeded
 * as undefined (or the engine drops them), the kind's secret inputs made secrets even when the program passes them
 * in the clear (inputs are written to state too), the account recorded by name, the resource's URN (the kind of
 * every operation, and its creations' tokens, are derived from it: the dynamic provider host gives `create` none),
 * the provider's module (PROVIDER_MODULE), and the kind's secret outputs encrypted in state.
 */
export function registration(
  kind: KindRegistration,
  name: string,
  args: object,
  opts: ResourceOptions,
): { type: string; props: Record<string, unknown>; options: pulumi.CustomResourceOptions } {
  const { account, ...options } = opts;
  const type = dynamicType(kind.name);
  const urn = pulumi.createUrn(name, type, options.parent);
  const secretInputs = Object.entries(args).map(([k, v]) => [k, kind.secretInputs.includes(k) && v !== undefined ? pulumi.secret(v) : v]);
  const props = {
    ...Object.fromEntries(kind.outputs.map((output) => [output, undefined])),
    ...Object.fromEntries(secretInputs),
    // Only when given: every prop costs the program a promise and its stack (Pulumi's runtime), per resource.
    ...(account ? { account: account.ref } : {}),
    [URN_INPUT]: urn,
    [PROVIDER_KEY]: PROVIDER_MODULE,
  };
  const additionalSecretOutputs = [...(options.additionalSecretOutputs ?? []), ...kind.secrets];
  return { type, props, options: { ...options, additionalSecretOutputs } };
}
