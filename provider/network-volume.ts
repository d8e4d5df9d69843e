import * as pulumi from "@pulumi/pulumi";
import type { VolumeQuery } from "../sdk/schemas";
import { SdkProvider } from "./sdk-provider";
import { CommonArgs, registration, ResourceOptions } from "./resource-options";

export interface NetworkVolumeArgs extends CommonArgs {
  /** Take the space from exactly this network volume offer (`ask_contract_id`). */
  offerId?: pulumi.Input<number>;
  /**
   * Otherwise the cheapest offer (by `storage_cost`) with room for `size` matching this network volume offer
   * search, e.g. `{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`.
   */
  q?: pulumi.Input<VolumeQuery>;
  /** GB. */
  size: pulumi.Input<number>;
  name?: pulumi.Input<string>;
}

const OUTPUTS = ["volumeId", "askContractId", "diskSpace", "volumeName", "geolocation", "status", "storageCost",
  "storageCostTotal", "instances"] as const;

/**
 * A network volume. The API shows no way to resize or rename one, so every change makes a new volume (before
 * the old one is deleted). A volume still attached to an instance is not deleted: destroy the instance first.
 */
export class NetworkVolume extends pulumi.dynamic.Resource {
  declare readonly volumeId: pulumi.Output<number>;
  /** The network volume offer the space was taken from. */
  declare readonly askContractId: pulumi.Output<number | null>;
  declare readonly diskSpace: pulumi.Output<number | null>;
  declare readonly volumeName: pulumi.Output<string | null>;
  declare readonly geolocation: pulumi.Output<string | null>;
  declare readonly status: pulumi.Output<string | null>;
  /** $/GB/month. */
  declare readonly storageCost: pulumi.Output<number | null>;
  /** $/hour for the whole volume. */
  declare readonly storageCostTotal: pulumi.Output<number | null>;
  declare readonly instances: pulumi.Output<number[]>;

  constructor(name: string, args: NetworkVolumeArgs, opts: ResourceOptions = {}) {
    const { props, options } = registration(OUTPUTS, args, opts);
    super(new SdkProvider("NetworkVolume"), name, props, options, "gpu-rental", "NetworkVolume");
  }
}
