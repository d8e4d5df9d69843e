import * as pulumi from "@pulumi/pulumi";
import type { FieldFilter, OfferType, Runtype, TargetState } from "../sdk/schemas";

/** The engine's marker for a value not known yet (preview). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

type Sdk = typeof import("../sdk");

/**
 * Loads the SDK from the program's folder, where the provider host runs: a plain `require` here would resolve
 * from Pulumi's own module instead (the provider is re-loaded from its serialized text), which finds the SDK only
 * when it sits in the same node_modules.
 */
function sdk(): Sdk {
  const { createRequire } = require("node:module");
  return createRequire(require("node:path").join(process.cwd(), "pulumi-program.js"))("gpu-rental/sdk");
}

/**
 * The dynamic provider of `Instance`. It is serialized into the stack and re-loaded in the provider host, so it
 * holds no state and no logic: each method loads the SDK (from the program's node_modules) and calls one
 * function of it. The API key reaches the SDK through `configure` (stack config) or the environment, never
 * through resource inputs, so it is never written to state.
 */
export class InstanceProvider implements pulumi.dynamic.ResourceProvider {
  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    sdk().configureFromStackConfig(req.config);
  }

  async check(olds: any, news: any): Promise<pulumi.dynamic.CheckResult> {
    return sdk().checkInstanceInputs(news, UNKNOWN);
  }

  async diff(id: string, olds: any, news: any): Promise<pulumi.dynamic.DiffResult> {
    return sdk().diffInstanceSpec(olds, news, UNKNOWN);
  }

  async create(inputs: any): Promise<pulumi.dynamic.CreateResult> {
    return sdk().createInstanceFromSpec(inputs);
  }

  async read(id: string, props: any): Promise<pulumi.dynamic.ReadResult> {
    const state = await sdk().readInstanceState(id, props);
    return state ? { id, props: state } : {};
  }

  async update(id: string, olds: any, news: any): Promise<pulumi.dynamic.UpdateResult> {
    return { outs: await sdk().updateInstanceFromSpec(id, olds, news) };
  }

  async delete(id: string): Promise<void> {
    await sdk().destroyInstanceById(id);
  }
}

export interface InstanceArgs {
  /** Rent exactly this offer. Otherwise the cheapest offer matching the criteria below is rented. */
  offerId?: pulumi.Input<number>;
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: pulumi.Input<string>;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: pulumi.Input<number>;
  /** Any offer-search filters, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. */
  filters?: pulumi.Input<Record<string, FieldFilter>>;
  /** Preference among matching offers. Default cheapest first: `[["dph_total", "asc"]]`. */
  order?: pulumi.Input<[string, "asc" | "desc"][]>;
  offerType?: pulumi.Input<OfferType>;
  maxPricePerHour?: pulumi.Input<number>;
  image: pulumi.Input<string>;
  label?: pulumi.Input<string>;
  /** Local disk in GB (default 8). */
  disk?: pulumi.Input<number>;
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  onstart?: pulumi.Input<string>;
  /** Launch mode; default `ssh_direct`, which gives the ssh host and port outputs. */
  runtype?: pulumi.Input<Runtype>;
  /** `running` (default) or `stopped`; changed in place. */
  targetState?: pulumi.Input<TargetState>;
}

const OUTPUTS = ["instanceId", "status", "sshHost", "sshPort", "rentedOfferId", "machineId", "gpuName", "numGpus",
  "pricePerHour", "geolocation", "instanceApiKey"] as const;

/**
 * A rented GPU instance. Label and target state change in place; any other change rents a new instance. The
 * offer actually rented is an output: a changed market or a refresh never replaces a running instance.
 */
export class Instance extends pulumi.dynamic.Resource {
  declare readonly instanceId: pulumi.Output<number>;
  declare readonly status: pulumi.Output<string | null>;
  declare readonly sshHost: pulumi.Output<string | null>;
  declare readonly sshPort: pulumi.Output<number | null>;
  declare readonly rentedOfferId: pulumi.Output<number>;
  declare readonly machineId: pulumi.Output<number | null>;
  declare readonly gpuName: pulumi.Output<string | null>;
  declare readonly numGpus: pulumi.Output<number | null>;
  declare readonly pricePerHour: pulumi.Output<number | null>;
  declare readonly geolocation: pulumi.Output<string | null>;
  /** The instance's own restricted key (`CONTAINER_API_KEY`); kept secret in state. */
  declare readonly instanceApiKey: pulumi.Output<string | null>;

  constructor(name: string, args: InstanceArgs, opts: pulumi.CustomResourceOptions = {}) {
    const outputs = Object.fromEntries(OUTPUTS.map((key) => [key, undefined]));
    super(
      new InstanceProvider(),
      name,
      { ...outputs, ...args },
      { ...opts, additionalSecretOutputs: [...(opts.additionalSecretOutputs ?? []), "instanceApiKey"] },
      "gpu-rental",
      "Instance",
    );
  }
}
