import * as pulumi from "@pulumi/pulumi";
import type { TemplateRuntype } from "../sdk/schemas";
import { SdkProvider } from "./sdk-provider";
import { CommonArgs, registration, ResourceOptions } from "./resource-options";

/** The fields of the service's template table, in camelCase; only `name` and `image` are required. */
export interface TemplateArgs extends CommonArgs {
  name: pulumi.Input<string>;
  image: pulumi.Input<string>;
  /** Image tag; default `latest`. */
  tag?: pulumi.Input<string>;
  desc?: pulumi.Input<string>;
  readme?: pulumi.Input<string>;
  /** Docker flags, e.g. `-e VAR=value -p 8080:8080`. */
  env?: pulumi.Input<string>;
  onstart?: pulumi.Input<string>;
  /** `ssh`, `jupyter` or `args` (default). */
  runtype?: pulumi.Input<TemplateRuntype>;
  argsStr?: pulumi.Input<string>;
  sshDirect?: pulumi.Input<boolean>;
  useSsh?: pulumi.Input<boolean>;
  jupDirect?: pulumi.Input<boolean>;
  jupyterDir?: pulumi.Input<string | null>;
  useJupyterLab?: pulumi.Input<boolean>;
  dockerLoginRepo?: pulumi.Input<string>;
  dockerLoginUser?: pulumi.Input<string>;
  /** The registry's access token: always kept secret, in inputs and outputs. */
  dockerLoginPass?: pulumi.Input<string>;
  href?: pulumi.Input<string>;
  repo?: pulumi.Input<string>;
  /** Default machine search filters, same shape as offer-search filters. */
  extraFilters?: pulumi.Input<Record<string, unknown>>;
  /** GB; default 8. */
  recommendedDiskSpace?: pulumi.Input<number>;
  private?: pulumi.Input<boolean>;
}

const OUTPUTS = ["templateId", "hashId"] as const;

/**
 * A stored template. Every field changes in place (`PUT /api/v0/template/`): the template keeps its numeric id
 * (the resource's id) and gets a new `hashId`, so instances created from `hashId` follow the edit.
 */
export class Template extends pulumi.dynamic.Resource {
  declare readonly templateId: pulumi.Output<number>;
  /** The content hash instances are created from (`templateHashId`); it changes on every edit. */
  declare readonly hashId: pulumi.Output<string>;

  constructor(name: string, args: TemplateArgs, opts: ResourceOptions = {}) {
    // Secret even when the program passes it in the clear: inputs are written to state too.
    const dockerLoginPass = args.dockerLoginPass === undefined ? undefined : pulumi.secret(args.dockerLoginPass);
    const { props, options } = registration(OUTPUTS, { ...args, dockerLoginPass }, opts, ["dockerLoginPass"]);
    super(new SdkProvider("Template"), name, props, options, "gpu-rental", "Template");
  }
}
