export * from "./generated/resources";
export { Account } from "./account";
export type { AccountArgs } from "./account";
export type { CommonArgs, ResourceOptions } from "./resource-options";
export { PROVIDER_MODULE } from "./sdk-provider";
import type { ResourceOptions } from "./resource-options";

/** The options of a fleet: Pulumi's own, plus the account its instances are rented in. */
export type GpuFleetOptions = ResourceOptions;

/** Where a GpuFleet member is reached over SSH (an item of its `sshEndpoints`). */
export interface SshEndpoint {
  instanceId: number;
  host: string | null;
  port: number | null;
}
export type { FunctionInputs, InvokeOptions } from "./functions";
