import * as pulumi from "@pulumi/pulumi";
import type { NetworkVolumeArgs, NetworkVolumeOutputProperties } from "./generated/resources";
import { SdkProvider } from "./sdk-provider";
import { registration, ResourceOptions } from "./resource-options";

export type { NetworkVolumeArgs } from "./generated/resources";

/**
 * A network volume. The API shows no way to resize or rename one, so every change makes a new volume (before
 * the old one is deleted). A volume still attached to an instance is not deleted: destroy the instance first.
 * Inputs and outputs: sdk/resources/descriptions/network-volume.ts (docs/reference.md).
 */
export class NetworkVolume extends pulumi.dynamic.Resource {
  constructor(name: string, args: NetworkVolumeArgs, opts: ResourceOptions = {}) {
    const { props, options } = registration("NetworkVolume", name, args, opts);
    super(new SdkProvider("NetworkVolume"), name, props, options, "gpu-rental", "NetworkVolume");
  }
}
export interface NetworkVolume extends NetworkVolumeOutputProperties {}
