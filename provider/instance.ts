import * as pulumi from "@pulumi/pulumi";
import type { InstanceArgs, InstanceOutputProperties } from "./generated/resources";
import { SdkProvider } from "./sdk-provider";
import { registration, ResourceOptions } from "./resource-options";

export type { InstanceArgs } from "./generated/resources";

/**
 * A rented GPU instance. Label and target state change in place; so do new criteria that the rented machine still
 * meets, and the boot-failure policy (recorded, nothing sent). Any other change rents a new instance. The offer
 * actually rented is an output: a changed market or a refresh never replaces a running instance.
 * Inputs and outputs: sdk/resources/descriptions/instance.ts (docs/reference.md).
 */
export class Instance extends pulumi.dynamic.Resource {
  constructor(name: string, args: InstanceArgs, opts: ResourceOptions = {}) {
    // Secret even when the program passes it in the clear: inputs are written to state too.
    const imageLogin = args.imageLogin === undefined ? undefined : pulumi.secret(args.imageLogin);
    const { props, options } = registration("Instance", name, { ...args, imageLogin }, opts);
    super(new SdkProvider("Instance"), name, props, options, "gpu-rental", "Instance");
  }
}
export interface Instance extends InstanceOutputProperties {}
