import * as pulumi from "@pulumi/pulumi";
import type { ApiKeyArgs, ApiKeyOutputProperties } from "./generated/resources";
import { SdkProvider } from "./sdk-provider";
import { registration, ResourceOptions } from "./resource-options";

export type { ApiKeyArgs } from "./generated/resources";

/**
 * An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`)
 * before the old one is revoked. Inputs and outputs: sdk/resources/descriptions/api-key.ts (docs/reference.md).
 */
export class ApiKey extends pulumi.dynamic.Resource {
  constructor(name: string, args: ApiKeyArgs, opts: ResourceOptions = {}) {
    const { props, options } = registration("ApiKey", name, args, opts);
    super(new SdkProvider("ApiKey"), name, props, options, "gpu-rental", "ApiKey");
  }
}
export interface ApiKey extends ApiKeyOutputProperties {}
