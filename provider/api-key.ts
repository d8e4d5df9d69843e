import * as pulumi from "@pulumi/pulumi";
import { RESOURCE_DESCRIPTIONS, secretsOf } from "../sdk/resources/descriptions";
import type { ApiKeyArgs, ApiKeyOutputProperties } from "./generated/resources";
import { SdkProvider } from "./sdk-provider";
import { registration, ResourceOptions } from "./resource-options";

export type { ApiKeyArgs } from "./generated/resources";

const DESCRIPTION = RESOURCE_DESCRIPTIONS.ApiKey;

/**
 * An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`)
 * before the old one is revoked. Inputs and outputs: sdk/resources/descriptions/api-key.ts (docs/reference.md).
 */
export class ApiKey extends pulumi.dynamic.Resource {
  constructor(name: string, args: ApiKeyArgs, opts: ResourceOptions = {}) {
    const { props, options } = registration(Object.keys(DESCRIPTION.outputs), args, opts, secretsOf(DESCRIPTION));
    super(new SdkProvider("ApiKey"), name, props, options, "gpu-rental", "ApiKey");
  }
}
export interface ApiKey extends ApiKeyOutputProperties {}
