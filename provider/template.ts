import * as pulumi from "@pulumi/pulumi";
import type { TemplateArgs, TemplateOutputProperties } from "./generated/resources";
import { SdkProvider } from "./sdk-provider";
import { registration, ResourceOptions } from "./resource-options";

export type { TemplateArgs } from "./generated/resources";

/**
 * A stored template. Every field changes in place (`PUT /api/v0/template/`): the template keeps its numeric id
 * (the resource's id) and gets a new `hashId`, so instances created from `hashId` follow the edit.
 * Inputs and outputs: sdk/resources/descriptions/template.ts (docs/reference.md).
 */
export class Template extends pulumi.dynamic.Resource {
  constructor(name: string, args: TemplateArgs, opts: ResourceOptions = {}) {
    // Secret even when the program passes it in the clear: inputs are written to state too.
    const dockerLoginPass = args.dockerLoginPass === undefined ? undefined : pulumi.secret(args.dockerLoginPass);
    const { props, options } = registration("Template", name, { ...args, dockerLoginPass }, opts);
    super(new SdkProvider("Template"), name, props, options, "gpu-rental", "Template");
  }
}
export interface Template extends TemplateOutputProperties {}
