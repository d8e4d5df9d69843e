import * as pulumi from "@pulumi/pulumi";
import type { GpuFleetArgs, GpuFleetOutputProperties } from "./generated/resources";
import { registration, ResourceOptions } from "./resource-options";
import { SdkProvider } from "./sdk-provider";

export type { GpuFleetArgs } from "./generated/resources";

/** The options of a fleet: Pulumi's own, plus the account its instances are rented in. */
export type GpuFleetOptions = ResourceOptions;

export interface SshEndpoint {
  instanceId: number;
  host: string | null;
  port: number | null;
}

/**
 * `size` instances of one template and criteria as one resource: rented together (all or nothing, no two
 * reaching for the same offer), waited for together, so the whole fleet holds one of the engine's `--parallel`
 * slots however large it is. Resizing adds or removes members at the end; a member that failed, was outbid or
 * was destroyed is replaced on the next `up`, its siblings untouched; `destroy` destroys every member.
 * Inputs and outputs: sdk/resources/descriptions/gpu-fleet.ts (docs/reference.md); lifecycle: sdk/resources/fleet.ts.
 */
export class GpuFleet extends pulumi.dynamic.Resource {
  constructor(name: string, args: GpuFleetArgs, opts: GpuFleetOptions = {}) {
    const { size } = args;
    if (typeof size === "number" && (!Number.isInteger(size) || size < 0 || size > 1000)) {
      throw new Error(`GpuFleet ${name}: size must be a whole number from 0 to 1000, got ${size}`);
    }
    // Secret even when the program passes it in the clear: inputs are written to state too.
    const imageLogin = args.imageLogin === undefined ? undefined : pulumi.secret(args.imageLogin);
    const inputs = { ...args, imageLogin, labelPrefix: args.labelPrefix ?? name };
    const { props, options } = registration("GpuFleet", name, inputs, opts);
    super(new SdkProvider("GpuFleet"), name, props, options, "gpu-rental", "GpuFleet");
  }
}
export interface GpuFleet extends GpuFleetOutputProperties {}
