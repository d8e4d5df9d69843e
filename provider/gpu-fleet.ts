import * as pulumi from "@pulumi/pulumi";
import type { FleetMember } from "../sdk/resources/fleet";
import { InstanceArgs } from "./instance";
import { registration, ResourceOptions } from "./resource-options";
import { SdkProvider } from "./sdk-provider";

export interface GpuFleetArgs extends Omit<InstanceArgs, "adoptId" | "offerId" | "label"> {
  /**
   * How many instances (0-1000). Changing it adds instances at the end or removes the last ones; the others are
   * untouched.
   */
  size: pulumi.Input<number>;
  /** Each instance is labelled `<labelPrefix>-<index>`. Default: the fleet's name. */
  labelPrefix?: pulumi.Input<string>;
  /**
   * Running instances to take as members 0, 1, ... when the fleet is created, instead of renting them: how a
   * fleet of the component form moves to this one with nothing replaced (docs/fleets.md). Read only at creation.
   */
  adoptIds?: pulumi.Input<pulumi.Input<number>[]>;
}

/** The options of a fleet: Pulumi's own, plus the account its instances are rented in. */
export type GpuFleetOptions = ResourceOptions;

export interface SshEndpoint {
  instanceId: number;
  host: string | null;
  port: number | null;
}

const OUTPUTS = ["members", "instanceIds", "sshEndpoints", "instanceApiKeys"] as const;

/**
 * `size` instances of one template and criteria as one resource: rented together (all or nothing, no two
 * reaching for the same offer), waited for together, so the whole fleet holds one of the engine's `--parallel`
 * slots however large it is. Resizing adds or removes members at the end; a member that failed, was outbid or
 * was destroyed is replaced on the next `up`, its siblings untouched; `destroy` destroys every member.
 * The lifecycle lives in the SDK (sdk/resources/fleet.ts); this class only registers it.
 */
export class GpuFleet extends pulumi.dynamic.Resource {
  /** Instance ids, in index order. */
  declare readonly instanceIds: pulumi.Output<number[]>;
  /** Where to reach each instance over SSH, in index order. */
  declare readonly sshEndpoints: pulumi.Output<SshEndpoint[]>;
  /** Each member's state (status, offer, machine, price, ...), in index order. */
  declare readonly members: pulumi.Output<FleetMember[]>;
  /** Each member's own restricted key (`CONTAINER_API_KEY`), in index order; kept secret in state. */
  declare readonly instanceApiKeys: pulumi.Output<(string | null)[]>;

  constructor(name: string, args: GpuFleetArgs, opts: GpuFleetOptions = {}) {
    const { size } = args;
    if (typeof size === "number" && (!Number.isInteger(size) || size < 0 || size > 1000)) {
      throw new Error(`GpuFleet ${name}: size must be a whole number from 0 to 1000, got ${size}`);
    }
    const imageLogin = args.imageLogin === undefined ? undefined : pulumi.secret(args.imageLogin);
    const inputs = { ...args, imageLogin, labelPrefix: args.labelPrefix ?? name };
    const { props, options } = registration(OUTPUTS, inputs, opts, ["instanceApiKeys", "imageLogin"]);
    super(new SdkProvider("GpuFleet"), name, props, options, "gpu-rental", "GpuFleet");
  }
}
