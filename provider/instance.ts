import * as pulumi from "@pulumi/pulumi";
import type { OfferFilters } from "../sdk/offer-filters";
import type { OfferType, Runtype, TargetState } from "../sdk/schemas";
import { SdkProvider } from "./sdk-provider";
import { CommonArgs, registration, ResourceOptions } from "./resource-options";

export interface InstanceArgs extends CommonArgs {
  /** Rent exactly this offer. Otherwise the cheapest offer matching the criteria below is rented. */
  offerId?: pulumi.Input<number>;
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: pulumi.Input<string>;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: pulumi.Input<number>;
  /**
   * Any offer-search filters, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }` (units in
   * OfferFilters). Criteria are placement rules: new ones that the rented machine still meets change nothing.
   */
  filters?: pulumi.Input<OfferFilters>;
  /** Preference among matching offers. Default cheapest first: `[["dph_total", "asc"]]`. */
  order?: pulumi.Input<[string, "asc" | "desc"][]>;
  offerType?: pulumi.Input<OfferType>;
  maxPricePerHour?: pulumi.Input<number>;
  /** The container image; may be left out when `templateHashId` gives one. */
  image?: pulumi.Input<string>;
  /** Create from this template (its `hashId` output): its values are the base, the inputs here win. */
  templateHashId?: pulumi.Input<string>;
  label?: pulumi.Input<string>;
  /** Local disk in GB (default 8). */
  disk?: pulumi.Input<number>;
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  onstart?: pulumi.Input<string>;
  /**
   * A network volume mounted at `mountPath`: an existing one (`volumeId`, e.g. a NetworkVolume's `volumeId`),
   * or a new one of `size` GB from a volume offer (`offerId`). Changing it replaces the instance.
   */
  volume?: pulumi.Input<{ volumeId?: pulumi.Input<number>; offerId?: number; size?: number; mountPath: string }>;
  /** Launch mode; default `ssh_direct`, which gives the ssh host and port outputs. */
  runtype?: pulumi.Input<Runtype>;
  /** `running` (default) or `stopped`; changed in place. */
  targetState?: pulumi.Input<TargetState>;
  /** The bid of an interruptible rental ($/hour); default `maxPricePerHour`, else the offer's minimum bid. */
  price?: pulumi.Input<number>;
  /** Replaces the image's command (runtype `args`). */
  argsStr?: pulumi.Input<string>;
  useJupyterLab?: pulumi.Input<boolean>;
  jupyterDir?: pulumi.Input<string>;
  pythonUtf8?: pulumi.Input<boolean>;
  langUtf8?: pulumi.Input<boolean>;
  /** Registry login for a private image, `-u <user> -p <token> <registry>`: always kept secret. */
  imageLogin?: pulumi.Input<string>;
  /** Fail at once when the instance cannot start right away. */
  cancelUnavail?: pulumi.Input<boolean>;
  /** A VM instead of a container. */
  vm?: pulumi.Input<boolean>;
  /**
   * When the instance fails to boot (exited, unknown, offline): `fail` (default: destroyed, and the error
   * reported), or `replace` it with another offer, at most `maxBootAttempts` rentals in all (default 3).
   */
  onBootFailure?: pulumi.Input<"fail" | "replace">;
  maxBootAttempts?: pulumi.Input<number>;
  /**
   * The instance ends itself after this long from its boot (`"90s"`, `"15m"`, `"6h"`, `"2d"`), even when this
   * program and the machine it ran on are gone: a watchdog started from onstart calls the service with the
   * instance's own key. Needs an SSH or Jupyter runtype (refused at preview with runtype `args`). Changing it
   * replaces nothing: the running watchdog keeps its policy (`lifetimeInEffect`), the new one applies to the next
   * instance rented. See docs/spend-guard.md.
   */
  maxLifetime?: pulumi.Input<string>;
  /** `destroy` (default) or `stop` (the disk is kept, and charged) at the end of `maxLifetime`. */
  onLifetimeEnd?: pulumi.Input<"destroy" | "stop">;
  /** The instance ends itself when every GPU stayed below `idleThreshold` (nvidia-smi) for this long. */
  idleTimeout?: pulumi.Input<string>;
  /** `stop` (default) or `destroy` when idle. */
  idleAction?: pulumi.Input<"stop" | "destroy">;
  /** GPU utilisation, percent, below which a GPU counts as idle (default 10). */
  idleThreshold?: pulumi.Input<number>;
}

const OUTPUTS = ["instanceId", "status", "sshHost", "sshPort", "rentedOfferId", "rentedOffer", "machineId", "gpuName",
  "numGpus", "pricePerHour", "geolocation", "instanceApiKey", "lifetimeInEffect"] as const;

/**
 * A rented GPU instance. Label and target state change in place; so do new criteria that the rented machine still
 * meets, and the boot-failure policy (recorded, nothing sent). Any other change rents a new instance. The offer
 * actually rented is an output: a changed market or a refresh never replaces a running instance.
 */
export class Instance extends pulumi.dynamic.Resource {
  declare readonly instanceId: pulumi.Output<number>;
  declare readonly status: pulumi.Output<string | null>;
  declare readonly sshHost: pulumi.Output<string | null>;
  declare readonly sshPort: pulumi.Output<number | null>;
  /** The offer rented; null for an adopted instance. */
  declare readonly rentedOfferId: pulumi.Output<number | null>;
  /** The offer as it was when rented (its fields, as the offer search shows them). */
  declare readonly rentedOffer: pulumi.Output<Record<string, unknown> | null>;
  declare readonly machineId: pulumi.Output<number | null>;
  declare readonly gpuName: pulumi.Output<string | null>;
  declare readonly numGpus: pulumi.Output<number | null>;
  declare readonly pricePerHour: pulumi.Output<number | null>;
  declare readonly geolocation: pulumi.Output<string | null>;
  /** The instance's own restricted key (`CONTAINER_API_KEY`); kept secret in state. */
  declare readonly instanceApiKey: pulumi.Output<string | null>;
  /** The lifetime policy the instance's watchdog runs with (null: none). */
  declare readonly lifetimeInEffect: pulumi.Output<string | null>;

  constructor(name: string, args: InstanceArgs, opts: ResourceOptions = {}) {
    // Secret even when the program passes it in the clear: inputs are written to state too.
    const imageLogin = args.imageLogin === undefined ? undefined : pulumi.secret(args.imageLogin);
    const { props, options } = registration(OUTPUTS, { ...args, imageLogin }, opts, ["instanceApiKey", "imageLogin"]);
    super(new SdkProvider("Instance"), name, props, options, "gpu-rental", "Instance");
  }
}
