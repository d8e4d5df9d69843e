import * as pulumi from "@pulumi/pulumi";
import type { PermissionSet } from "../sdk/schemas";
import { SdkProvider } from "./sdk-provider";
import { CommonArgs, registration, ResourceOptions } from "./resource-options";

export interface ApiKeyArgs extends CommonArgs {
  name?: pulumi.Input<string>;
  /** `{ api: { instance_read: {} } }`: the categories the key may use. Without it the key has full access. */
  permissions?: pulumi.Input<PermissionSet>;
}

const OUTPUTS = ["keyId", "key", "keyPrefix"] as const;

/**
 * An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`)
 * before the old one is revoked.
 */
export class ApiKey extends pulumi.dynamic.Resource {
  declare readonly keyId: pulumi.Output<number>;
  /** The key's value, shown by the service once: a secret output. */
  declare readonly key: pulumi.Output<string>;
  declare readonly keyPrefix: pulumi.Output<string | null>;

  constructor(name: string, args: ApiKeyArgs, opts: ResourceOptions = {}) {
    const { props, options } = registration(OUTPUTS, args, opts, ["key"]);
    super(new SdkProvider("ApiKey"), name, props, options, "gpu-rental", "ApiKey");
  }
}
