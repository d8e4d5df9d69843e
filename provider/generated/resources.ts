// Generated from the kinds' and functions' descriptions (provider/lifecycle/) by `npm run gen:resources`: do not edit (a test checks it is up to date).
import * as pulumi from "@pulumi/pulumi";
import type { OfferFilters, OfferType, PermissionSet, Runtype, TargetState, TemplateFilters, TemplateRuntype, VolumeQuery } from "../../sdk";
import { FunctionInputs, invokeFunction, invokeOutput, InvokeOptions } from "../functions";
import { CommonArgs, registration, ResourceOptions } from "../resource-options";

/** The inputs of an Instance. */
export interface InstanceArgs extends CommonArgs {
  /** Rent exactly this offer. Otherwise the cheapest offer matching the criteria is rented. */
  offerId?: pulumi.Input<number>;
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: pulumi.Input<string>;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: pulumi.Input<number>;
  /** Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. */
  filters?: pulumi.Input<OfferFilters>;
  /** Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`. */
  order?: pulumi.Input<[string, "asc" | "desc"][]>;
  /** The market to rent in. Default: `"on-demand"`. */
  offerType?: pulumi.Input<OfferType>;
  /** The most to pay, $/hour: offers above it are left out. */
  maxPricePerHour?: pulumi.Input<number>;
  /** The container image; may be left out when `templateHashId` gives one. */
  image?: pulumi.Input<string>;
  /** Create from this template (its `hashId` output): its values are the base, the inputs here win. */
  templateHashId?: pulumi.Input<string>;
  /** The instance's label; changed in place. */
  label?: pulumi.Input<string>;
  /** Local disk in GB; default 8 (or the template's). */
  disk?: pulumi.Input<number>;
  /** Environment variables of the container. */
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** A script run when the instance starts. */
  onstart?: pulumi.Input<string>;
  /** A network volume mounted at `mountPath`: an existing one (`volumeId`), or a new one of `size` GB from a volume offer (`offerId`). Changing it replaces the instance. */
  volume?: pulumi.Input<{ volumeId?: pulumi.Input<number>; offerId?: pulumi.Input<number>; size?: pulumi.Input<number>; mountPath: pulumi.Input<string> }>;
  /** Volumes of the account mounted by path, e.g. `{ "/data": dataset.volumeId }`: local volumes (a LocalVolume on this instance's machine: rent with the volume's `askContractId` as `offerId`) and network volumes. What is written there outlives the instance. Sent as `-v V.<id>:<path>` in the container's flags, as the service takes them. Changing it replaces the instance. */
  volumes?: pulumi.Input<Record<string, pulumi.Input<number>>>;
  /** Launch mode; default `ssh_direct` (or the template's), which gives the ssh host and port outputs. */
  runtype?: pulumi.Input<Runtype>;
  /** `running` or `stopped`; changed in place. Default: `"running"`. */
  targetState?: pulumi.Input<TargetState>;
  /** The bid of an interruptible rental ($/hour); default `maxPricePerHour`, else the offer's minimum bid. Changed in place: a bid below the offer's minimum stops the instance (outbid), a higher one boots it again. */
  price?: pulumi.Input<number>;
  /** Replaces the image's command (runtype `args`). */
  argsStr?: pulumi.Input<string>;
  /** Jupyter Lab rather than the classic notebook. */
  useJupyterLab?: pulumi.Input<boolean>;
  /** The folder Jupyter opens in. */
  jupyterDir?: pulumi.Input<string>;
  /** Sets PYTHONUTF8=1 in the container. */
  pythonUtf8?: pulumi.Input<boolean>;
  /** Sets a UTF-8 locale in the container. */
  langUtf8?: pulumi.Input<boolean>;
  /** Registry login for a private image, `-u <user> -p <token> <registry>`: always kept secret. */
  imageLogin?: pulumi.Input<string>;
  /** Fail at once when the instance cannot start right away. */
  cancelUnavail?: pulumi.Input<boolean>;
  /** A VM instead of a container. */
  vm?: pulumi.Input<boolean>;
  /** When the instance fails to boot: `fail` (destroyed, and the error reported), or `replace` it with another offer. Default: `"fail"`. */
  onBootFailure?: pulumi.Input<"fail" | "replace">;
  /** Rentals tried in all with `onBootFailure: replace`, and for an instance that does not come up within the boot deadline (whatever the policy: the service has accepted one offer twice and left the second instance never booting). Default: `3`. */
  maxBootAttempts?: pulumi.Input<number>;
  /** The instance ends itself this long after its boot (`"90s"`, `"15m"`, `"6h"`, `"2d"`), even when the program and the machine it ran on are gone: a watchdog started from onstart calls the service with the instance's own key. Needs an SSH or Jupyter runtype (refused at preview with runtype `args`). Changing it replaces nothing: the running watchdog keeps its policy (`lifetimeInEffect`); the new one applies to the next instance rented. See docs/spend-guard.md. */
  maxLifetime?: pulumi.Input<string>;
  /** What the instance does at the end of `maxLifetime`. Default: `"destroy"`. */
  onLifetimeEnd?: pulumi.Input<"destroy" | "stop">;
  /** The instance ends itself when every GPU stayed below `idleThreshold` (read with nvidia-smi) for this long. */
  idleTimeout?: pulumi.Input<string>;
  /** What the instance does when idle for `idleTimeout`. Default: `"stop"`. */
  idleAction?: pulumi.Input<"stop" | "destroy">;
  /** GPU utilisation, percent, below which a GPU counts as idle. Default: `10`. */
  idleThreshold?: pulumi.Input<number>;
  /** Public keys (one OpenSSH line each) attached to the instance once it is created, besides the account's keys it takes at creation: log in with any of them. Changed in place: keys added are attached, keys removed are detached (even one the instance also took from the account). Each is refused at preview when it is not one OpenSSH public key line. */
  sshKeys?: pulumi.Input<string[]>;
}

/** The outputs of an Instance, besides its inputs. */
export interface InstanceOutputProperties {
  /** The instance's id (also the resource's id). */
  readonly instanceId: pulumi.Output<number>;
  /** The instance's status as the service reports it (`running`, `loading`, ...). */
  readonly status: pulumi.Output<string | null>;
  /** The host to reach it over SSH. */
  readonly sshHost: pulumi.Output<string | null>;
  /** The port to reach it over SSH. */
  readonly sshPort: pulumi.Output<number | null>;
  /** The offer rented; null for an adopted or imported instance. */
  readonly rentedOfferId: pulumi.Output<number | null>;
  /** Of the offer as it was when rented, its `id` and the fields criteria compare (`gpu_name`, `num_gpus`, `gpu_ram`, `dph_total`, `min_bid`, `reliability`, `geolocation`, `direct_port_count`, and every field its filters name): what new criteria are checked against. */
  readonly rentedOffer: pulumi.Output<Record<string, unknown> | null>;
  /** The machine it runs on. */
  readonly machineId: pulumi.Output<number | null>;
  /** Its GPU model. */
  readonly gpuName: pulumi.Output<string | null>;
  /** Its GPU count. */
  readonly numGpus: pulumi.Output<number | null>;
  /** What it costs, $/hour. */
  readonly pricePerHour: pulumi.Output<number | null>;
  /** Where the machine is. */
  readonly geolocation: pulumi.Output<string | null>;
  /** The instance's own restricted key (`CONTAINER_API_KEY`); kept secret in state. */
  readonly instanceApiKey: pulumi.Output<string | null>;
  /** The lifetime policy the instance's watchdog runs with (null: none). */
  readonly lifetimeInEffect: pulumi.Output<string | null>;
}

/** A rented GPU instance. Label and target state change in place; so do new criteria that the rented machine still meets, and the boot-failure policy (recorded, nothing sent). Any other change rents a new instance. The offer actually rented is an output: a changed market or a refresh never replaces a running instance. */
export class Instance extends pulumi.CustomResource {
  constructor(name: string, args: InstanceArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Instance", outputs: ["instanceId", "status", "sshHost", "sshPort", "rentedOfferId", "rentedOffer", "machineId", "gpuName", "numGpus", "pricePerHour", "geolocation", "instanceApiKey", "lifetimeInEffect"], secretInputs: ["imageLogin"], secrets: ["imageLogin", "instanceApiKey"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Instance extends InstanceOutputProperties {}

/** The inputs of a Template. */
export interface TemplateArgs extends CommonArgs {
  /** The template's name. */
  name: pulumi.Input<string>;
  /** The container image. */
  image: pulumi.Input<string>;
  /** Image tag. Default: `"latest"`. */
  tag?: pulumi.Input<string>;
  /** A description. */
  desc?: pulumi.Input<string>;
  /** A readme (Markdown). */
  readme?: pulumi.Input<string>;
  /** Docker flags, e.g. `-e VAR=value -p 8080:8080`. */
  env?: pulumi.Input<string>;
  /** A script run when an instance starts. */
  onstart?: pulumi.Input<string>;
  /** `ssh`, `jupyter` or `args`. Default: `"args"`. */
  runtype?: pulumi.Input<TemplateRuntype>;
  /** Arguments of the image's entrypoint (runtype `args`). */
  argsStr?: pulumi.Input<string>;
  /** SSH straight to the machine's port. */
  sshDirect?: pulumi.Input<boolean>;
  /** Launch with SSH. */
  useSsh?: pulumi.Input<boolean>;
  /** Jupyter straight on the machine's port. */
  jupDirect?: pulumi.Input<boolean>;
  /** The folder Jupyter opens in. */
  jupyterDir?: pulumi.Input<string | null>;
  /** Jupyter Lab rather than the classic notebook. */
  useJupyterLab?: pulumi.Input<boolean>;
  /** The private registry of the image. */
  dockerLoginRepo?: pulumi.Input<string>;
  /** The registry's user. */
  dockerLoginUser?: pulumi.Input<string>;
  /** The registry's access token: always kept secret, in inputs and outputs. */
  dockerLoginPass?: pulumi.Input<string>;
  /** A link shown with the template. */
  href?: pulumi.Input<string>;
  /** The image's repository. */
  repo?: pulumi.Input<string>;
  /** Default machine search filters, same shape as offer-search filters. */
  extraFilters?: pulumi.Input<Record<string, unknown>>;
  /** GB. Default: `8`. */
  recommendedDiskSpace?: pulumi.Input<number>;
  /** Visible to its owner only. */
  private?: pulumi.Input<boolean>;
}

/** The outputs of a Template, besides its inputs. */
export interface TemplateOutputProperties {
  /** The template's numeric id (also the resource's id). */
  readonly templateId: pulumi.Output<number>;
  /** The content hash instances are created from (`templateHashId`); it changes on every edit. */
  readonly hashId: pulumi.Output<string>;
}

/** A stored template. Every field changes in place (`PUT /api/v0/template/`): the template keeps its numeric id (the resource's id) and gets a new `hashId`, so instances created from `hashId` follow the edit. */
export class Template extends pulumi.CustomResource {
  constructor(name: string, args: TemplateArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Template", outputs: ["templateId", "hashId"], secretInputs: ["dockerLoginPass"], secrets: ["dockerLoginPass"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Template extends TemplateOutputProperties {}

/** The inputs of a NetworkVolume. */
export interface NetworkVolumeArgs extends CommonArgs {
  /** Take the space from exactly this network volume offer (`ask_contract_id`). */
  offerId?: pulumi.Input<number>;
  /** Otherwise the cheapest offer (by `storage_cost`) with room for `size` matching this network volume offer search, e.g. `{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`. An offer taken by someone else before the volume is made is searched again. */
  q?: pulumi.Input<VolumeQuery>;
  /** GB. */
  size: pulumi.Input<number>;
  /** The volume's name. */
  name?: pulumi.Input<string>;
}

/** The outputs of a NetworkVolume, besides its inputs. */
export interface NetworkVolumeOutputProperties {
  /** The volume's id (also the resource's id): an Instance mounts it by it (`volumes`). */
  readonly volumeId: pulumi.Output<number>;
  /** The network volume offer the space was taken from. */
  readonly askContractId: pulumi.Output<number | null>;
  /** Its size in GB. */
  readonly diskSpace: pulumi.Output<number | null>;
  /** The name the service gave the volume. */
  readonly volumeName: pulumi.Output<string | null>;
  /** The machine it is on (a local volume): only that machine's instances mount it. */
  readonly machineId: pulumi.Output<number | null>;
  /** Where it is. */
  readonly geolocation: pulumi.Output<string | null>;
  /** Its status as the service reports it. */
  readonly status: pulumi.Output<string | null>;
  /** $/GB/month. */
  readonly storageCost: pulumi.Output<number | null>;
  /** $/hour for the whole volume. */
  readonly storageCostTotal: pulumi.Output<number | null>;
  /** The instances it is attached to. */
  readonly instances: pulumi.Output<number[]>;
}

/** A network volume. Network volumes are not generally released on the service (its own client hides them as not yet released): an account without the feature is refused, reported as NetworkVolumesUnavailableError before anything is made. The API shows no way to resize or rename one, so every change makes a new volume (before the old one is deleted). A volume still attached to an instance (running or stopped) is not deleted: destroy the instance first. */
export class NetworkVolume extends pulumi.CustomResource {
  constructor(name: string, args: NetworkVolumeArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "NetworkVolume", outputs: ["volumeId", "askContractId", "diskSpace", "volumeName", "machineId", "geolocation", "status", "storageCost", "storageCostTotal", "instances"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface NetworkVolume extends NetworkVolumeOutputProperties {}

/** The inputs of a LocalVolume. */
export interface LocalVolumeArgs extends CommonArgs {
  /** Take the space from exactly this local volume offer (`ask_contract_id`). */
  offerId?: pulumi.Input<number>;
  /** Otherwise the cheapest offer (by `storage_cost`) with room for `size` matching this local volume offer search, e.g. `{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`. An offer taken by someone else before the volume is made is searched again. */
  q?: pulumi.Input<VolumeQuery>;
  /** GB. */
  size: pulumi.Input<number>;
  /** The volume's name. */
  name?: pulumi.Input<string>;
}

/** The outputs of a LocalVolume, besides its inputs. */
export interface LocalVolumeOutputProperties {
  /** The volume's id (also the resource's id): an Instance mounts it by it (`volumes`). */
  readonly volumeId: pulumi.Output<number>;
  /** The local volume offer the space was taken from. */
  readonly askContractId: pulumi.Output<number | null>;
  /** Its size in GB. */
  readonly diskSpace: pulumi.Output<number | null>;
  /** The name the service gave the volume. */
  readonly volumeName: pulumi.Output<string | null>;
  /** The machine it is on (a local volume): only that machine's instances mount it. */
  readonly machineId: pulumi.Output<number | null>;
  /** Where it is. */
  readonly geolocation: pulumi.Output<string | null>;
  /** Its status as the service reports it. */
  readonly status: pulumi.Output<string | null>;
  /** $/GB/month. */
  readonly storageCost: pulumi.Output<number | null>;
  /** $/hour for the whole volume. */
  readonly storageCostTotal: pulumi.Output<number | null>;
  /** The instances it is attached to. */
  readonly instances: pulumi.Output<number[]>;
}

/** A local volume: space on one machine's disk, kept when the instances that mount it are destroyed (its storage bills until the volume is deleted). Only instances of that machine mount it: rent them with `offerId` of an offer of that machine (`machineId` is an output), and mount it with the Instance's `volumes`. The API shows no way to resize or rename one, so every change makes a new volume (before the old one is deleted). A volume still attached to an instance (running or stopped) is not deleted: destroy the instance first. */
export class LocalVolume extends pulumi.CustomResource {
  constructor(name: string, args: LocalVolumeArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "LocalVolume", outputs: ["volumeId", "askContractId", "diskSpace", "volumeName", "machineId", "geolocation", "status", "storageCost", "storageCostTotal", "instances"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface LocalVolume extends LocalVolumeOutputProperties {}

/** The inputs of an ApiKey. */
export interface ApiKeyArgs extends CommonArgs {
  /** The key's name. */
  name?: pulumi.Input<string>;
  /** `{ api: { instance_read: {} } }`: the categories the key may use. Without it the key has full access. */
  permissions?: pulumi.Input<PermissionSet>;
}

/** The outputs of an ApiKey, besides its inputs. */
export interface ApiKeyOutputProperties {
  /** The key's id (also the resource's id). */
  readonly keyId: pulumi.Output<number>;
  /** The key's value, shown by the service once: a secret output (null when adopted or imported). */
  readonly key: pulumi.Output<string | null>;
  /** The first characters of the key, as the console shows them. */
  readonly keyPrefix: pulumi.Output<string | null>;
}

/** An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`) before the old one is revoked. */
export class ApiKey extends pulumi.CustomResource {
  constructor(name: string, args: ApiKeyArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "ApiKey", outputs: ["keyId", "key", "keyPrefix"], secretInputs: [], secrets: ["key"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface ApiKey extends ApiKeyOutputProperties {}

/** The inputs of a SshKey. */
export interface SshKeyArgs extends CommonArgs {
  /** One OpenSSH public key line, `ssh-ed25519 AAAA... me@laptop` (the `.pub` file). Refused at preview when it is not one (a private key is refused by name). */
  publicKey: pulumi.Input<string>;
}

/** The outputs of a SshKey, besides its inputs. */
export interface SshKeyOutputProperties {
  /** The key's id on the account (also the resource's id). */
  readonly sshKeyId: pulumi.Output<number>;
}

/** An SSH public key registered on the account: instances created after it take it (an Instance's `sshKeys` reach an instance that exists already, or one not on the account). A key is its material: declaring one the account has already (registered by hand, or by a run cut off before its state learnt of it) takes that key over, and destroy removes it. A new comment changes the key in place; other key material registers another key. */
export class SshKey extends pulumi.CustomResource {
  constructor(name: string, args: SshKeyArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "SshKey", outputs: ["sshKeyId"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface SshKey extends SshKeyOutputProperties {}

/** The inputs of an EnvVar. */
export interface EnvVarArgs extends CommonArgs {
  /** The variable's name: letters, digits and underscores, not starting with a digit. The service keeps it upper-cased (`hf_token` is `HF_TOKEN`). */
  name: pulumi.Input<string>;
  /** The variable's value, at most 4,096 characters: always kept secret (the service shows it to no one, masked as `*****`). */
  value: pulumi.Input<string>;
}

/** The outputs of an EnvVar, besides its inputs. */
export interface EnvVarOutputProperties {
  /** The name as the service keeps it, upper-cased (also the resource's id). */
  readonly key: pulumi.Output<string>;
}

/** An environment variable of the account (`HF_TOKEN`, `WANDB_API_KEY`): every instance created after it gets it in its processes' environment (an instance's own `env` wins on a clash); instances keep the value they were created with. A new value is set in place; another name makes another variable. Declaring a name the account has already takes that variable over, its value set to the declared one; `pulumi import` declares the value the service shows (masked as `*****`: put the real value's source in its place, and the next up sets it), and destroy deletes it. */
export class EnvVar extends pulumi.CustomResource {
  constructor(name: string, args: EnvVarArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "EnvVar", outputs: ["key"], secretInputs: ["value"], secrets: ["value"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface EnvVar extends EnvVarOutputProperties {}

/** The inputs of a GpuFleet. */
export interface GpuFleetArgs extends CommonArgs {
  /** How many members (0 to 1000). Changing it adds members at the end or removes the last ones. */
  size: pulumi.Input<number>;
  /** Member `i` is labelled `<labelPrefix>-<i>`. Default: the resource's name. */
  labelPrefix?: pulumi.Input<string>;
  /** Running instances to take as members 0, 1, ... when the fleet is created, instead of renting them (how a fleet of the earlier component form moves to this one: docs/fleets.md). Read only at creation. */
  adoptIds?: pulumi.Input<number[]>;
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: pulumi.Input<string>;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: pulumi.Input<number>;
  /** Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. */
  filters?: pulumi.Input<OfferFilters>;
  /** Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`. */
  order?: pulumi.Input<[string, "asc" | "desc"][]>;
  /** The market to rent in. Default: `"on-demand"`. */
  offerType?: pulumi.Input<OfferType>;
  /** The most to pay, $/hour: offers above it are left out. */
  maxPricePerHour?: pulumi.Input<number>;
  /** The container image; may be left out when `templateHashId` gives one. */
  image?: pulumi.Input<string>;
  /** Create from this template (its `hashId` output): its values are the base, the inputs here win. */
  templateHashId?: pulumi.Input<string>;
  /** Local disk in GB; default 8 (or the template's). */
  disk?: pulumi.Input<number>;
  /** Environment variables of the container. */
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** A script run when the instance starts. */
  onstart?: pulumi.Input<string>;
  /** A network volume mounted at `mountPath`: an existing one (`volumeId`), or a new one of `size` GB from a volume offer (`offerId`). Changing it replaces the instance. */
  volume?: pulumi.Input<{ volumeId?: pulumi.Input<number>; offerId?: pulumi.Input<number>; size?: pulumi.Input<number>; mountPath: pulumi.Input<string> }>;
  /** Volumes of the account mounted by path, e.g. `{ "/data": dataset.volumeId }`: local volumes (a LocalVolume on this instance's machine: rent with the volume's `askContractId` as `offerId`) and network volumes. What is written there outlives the instance. Sent as `-v V.<id>:<path>` in the container's flags, as the service takes them. Changing it replaces the instance. */
  volumes?: pulumi.Input<Record<string, pulumi.Input<number>>>;
  /** Launch mode; default `ssh_direct` (or the template's), which gives the ssh host and port outputs. */
  runtype?: pulumi.Input<Runtype>;
  /** `running` or `stopped`; changed in place. Default: `"running"`. */
  targetState?: pulumi.Input<TargetState>;
  /** The bid of an interruptible rental ($/hour); default `maxPricePerHour`, else the offer's minimum bid. Changed in place: a bid below the offer's minimum stops the instance (outbid), a higher one boots it again. */
  price?: pulumi.Input<number>;
  /** Replaces the image's command (runtype `args`). */
  argsStr?: pulumi.Input<string>;
  /** Jupyter Lab rather than the classic notebook. */
  useJupyterLab?: pulumi.Input<boolean>;
  /** The folder Jupyter opens in. */
  jupyterDir?: pulumi.Input<string>;
  /** Sets PYTHONUTF8=1 in the container. */
  pythonUtf8?: pulumi.Input<boolean>;
  /** Sets a UTF-8 locale in the container. */
  langUtf8?: pulumi.Input<boolean>;
  /** Registry login for a private image, `-u <user> -p <token> <registry>`: always kept secret. */
  imageLogin?: pulumi.Input<string>;
  /** Fail at once when the instance cannot start right away. */
  cancelUnavail?: pulumi.Input<boolean>;
  /** A VM instead of a container. */
  vm?: pulumi.Input<boolean>;
  /** When the instance fails to boot: `fail` (destroyed, and the error reported), or `replace` it with another offer. Default: `"fail"`. */
  onBootFailure?: pulumi.Input<"fail" | "replace">;
  /** Rentals tried in all with `onBootFailure: replace`, and for an instance that does not come up within the boot deadline (whatever the policy: the service has accepted one offer twice and left the second instance never booting). Default: `3`. */
  maxBootAttempts?: pulumi.Input<number>;
  /** The instance ends itself this long after its boot (`"90s"`, `"15m"`, `"6h"`, `"2d"`), even when the program and the machine it ran on are gone: a watchdog started from onstart calls the service with the instance's own key. Needs an SSH or Jupyter runtype (refused at preview with runtype `args`). Changing it replaces nothing: the running watchdog keeps its policy (`lifetimeInEffect`); the new one applies to the next instance rented. See docs/spend-guard.md. */
  maxLifetime?: pulumi.Input<string>;
  /** What the instance does at the end of `maxLifetime`. Default: `"destroy"`. */
  onLifetimeEnd?: pulumi.Input<"destroy" | "stop">;
  /** The instance ends itself when every GPU stayed below `idleThreshold` (read with nvidia-smi) for this long. */
  idleTimeout?: pulumi.Input<string>;
  /** What the instance does when idle for `idleTimeout`. Default: `"stop"`. */
  idleAction?: pulumi.Input<"stop" | "destroy">;
  /** GPU utilisation, percent, below which a GPU counts as idle. Default: `10`. */
  idleThreshold?: pulumi.Input<number>;
  /** Public keys (one OpenSSH line each) attached to the instance once it is created, besides the account's keys it takes at creation: log in with any of them. Changed in place: keys added are attached, keys removed are detached (even one the instance also took from the account). Each is refused at preview when it is not one OpenSSH public key line. */
  sshKeys?: pulumi.Input<string[]>;
}

/** The outputs of a GpuFleet, besides its inputs. */
export interface GpuFleetOutputProperties {
  /** Each member's state, in index order. */
  readonly members: pulumi.Output<({ index: number; instanceId: number; label: string; status: string | null; sshHost: string | null; sshPort: number | null; rentedOfferId: number | null; rentedOffer: Record<string, unknown> | null; machineId: number | null; gpuName: string | null; numGpus: number | null; pricePerHour: number | null; geolocation: string | null })[]>;
  /** The members' instance ids, in index order. */
  readonly instanceIds: pulumi.Output<number[]>;
  /** Where to reach each member over SSH, in index order. */
  readonly sshEndpoints: pulumi.Output<({ instanceId: number; host: string | null; port: number | null })[]>;
  /** Each member's own restricted key (`CONTAINER_API_KEY`), in index order; null for an adopted member. Kept secret. */
  readonly instanceApiKeys: pulumi.Output<(string | null)[]>;
}

/** `size` instances of one spec held as one resource: one engine operation however large, so the fleet boots at the speed of one boot. Members are rented together (all or nothing, no two reaching for one offer) and waited for together. Resizing adds members at the end or removes the last ones; a member that failed to boot, was outbid or was destroyed out of band is replaced on the next update without touching the others; destroy destroys every member. */
export class GpuFleet extends pulumi.CustomResource {
  constructor(name: string, args: GpuFleetArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "GpuFleet", outputs: ["members", "instanceIds", "sshEndpoints", "instanceApiKeys"], secretInputs: ["imageLogin"], secrets: ["imageLogin", "instanceApiKeys"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface GpuFleet extends GpuFleetOutputProperties {}

/** The inputs of a Team. */
export interface TeamArgs extends CommonArgs {
  /** The team's name, unique on the service. */
  name: pulumi.Input<string>;
}

/** The outputs of a Team, besides its inputs. */
export interface TeamOutputProperties {
  /** The user id of the team's account (the one whose key made it). */
  readonly accountId: pulumi.Output<number>;
}

/** The team the account is: the key the resource uses makes its account a team (one team an account), with the roles `owner`, `manager` and `member`; `TeamRole` and `TeamMember` then shape it. A team account's own SSH keys are refused by the service (attach keys to instances instead). Another name replaces the team (the old one is deleted first); destroy deletes it, which only the team's own key may, and ends its members' keys. */
export class Team extends pulumi.CustomResource {
  constructor(name: string, args: TeamArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Team", outputs: ["accountId"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Team extends TeamOutputProperties {}

/** The inputs of a TeamRole. */
export interface TeamRoleArgs extends CommonArgs {
  /** The role's name in the team (not `owner`, the team's own). */
  name: pulumi.Input<string>;
  /** `{ api: { instance_read: {}, instance_write: {} } }`: the categories its members may use, each an object (its scopes, often empty). Categories: misc, user_read, user_write, instance_read, instance_write, billing, team_read, team_write. */
  permissions: pulumi.Input<PermissionSet>;
}

/** The outputs of a TeamRole, besides its inputs. */
export interface TeamRoleOutputProperties {
  /** The role's id in the team (also the resource's id). */
  readonly roleId: pulumi.Output<number>;
}

/** A role of the account's team (the account must be a team: a `Team`, in this stack or made by hand): the permission categories the keys of the members who hold it may use, read by the service at each call. Its name and permissions change in place, and its members keep it. Declaring a name the team has already takes that role over, its permissions set to the declared ones (preview says so). Destroy removes it; the service refuses while members hold it. */
export class TeamRole extends pulumi.CustomResource {
  constructor(name: string, args: TeamRoleArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "TeamRole", outputs: ["roleId"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface TeamRole extends TeamRoleOutputProperties {}

/** The inputs of a TeamMember. */
export interface TeamMemberArgs extends CommonArgs {
  /** The invitee's email: the address of their account on the service. */
  email: pulumi.Input<string>;
  /** The role they get: a `TeamRole`'s name, or `manager` or `member`. */
  role: pulumi.Input<string>;
}

/** The outputs of a TeamMember, besides its inputs. */
export interface TeamMemberOutputProperties {
  /** The member's user id, once they accepted (null while invited). */
  readonly userId: pulumi.Output<number | null>;
  /** `invited`, or `member` once they accepted. */
  readonly status: pulumi.Output<string>;
}

/** A member of the account's team, by email, with a role: created as an invitation (the invitee needs an account of the service, and accepts by mail within 4 hours), a member once accepted (`userId` then set; refresh sees it). Another email or role replaces it (the service changes no member's role). Destroy removes the member and ends their keys in the team; an invitation not accepted cannot be withdrawn, and lapses. */
export class TeamMember extends pulumi.CustomResource {
  constructor(name: string, args: TeamMemberArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "TeamMember", outputs: ["userId", "status"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface TeamMember extends TeamMemberOutputProperties {}

/** The inputs of a Subaccount. */
export interface SubaccountArgs extends CommonArgs {
  /** Its email: an address, not of the service's own domain. */
  email: pulumi.Input<string>;
  /** Its user name, at most 64 characters. */
  username: pulumi.Input<string>;
  /** Its password to log in to the console: kept secret, sent once. */
  password: pulumi.Input<string>;
  /** An account that hosts machines only. Default: `false`. */
  hostOnly?: pulumi.Input<boolean>;
}

/** The outputs of a Subaccount, besides its inputs. */
export interface SubaccountOutputProperties {
  /** The account's user id (also the resource's id). */
  readonly subaccountId: pulumi.Output<number>;
  /** The id of its API key (the value goes to the account's owner, not to the stack). */
  readonly keyId: pulumi.Output<number | null>;
}

/** An account of the service whose parent is this one (for a client team, or machines to host), with a key of its own. Every input replaces it. The service cannot delete an account: destroy drops it from the stack and leaves it on the service, as preview says. */
export class Subaccount extends pulumi.CustomResource {
  constructor(name: string, args: SubaccountArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Subaccount", outputs: ["subaccountId", "keyId"], secretInputs: ["password"], secrets: ["password"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Subaccount extends SubaccountOutputProperties {}

/** The inputs of a Webhook. */
export interface WebhookArgs extends CommonArgs {
  /** Where deliveries go: an `https://` URL (the service refuses others, and private or loopback targets). */
  url: pulumi.Input<string>;
  /** The events it is sent, at least one. */
  eventTypes: pulumi.Input<("client:low_credit" | "client:outbid" | "client:instance_started" | "client:instance_stopped" | "client:instance_deleted")[]>;
  /** Its name, at most 120 characters. */
  name?: pulumi.Input<string>;
  /** Change it (1, 2, ...) to rotate the secret in place. */
  secretVersion?: pulumi.Input<number>;
}

/** The outputs of a Webhook, besides its inputs. */
export interface WebhookOutputProperties {
  /** The webhook's id (also the resource's id). */
  readonly webhookId: pulumi.Output<number>;
  /** The secret deliveries are signed with: a secret output (null after an import or adoption, until a rotation). */
  readonly secret: pulumi.Output<string | null>;
}

/** A notification webhook of the account: the service POSTs the events it subscribes to, signed with its secret (check a delivery with the SDK's `verifyWebhookDelivery`). At most 4 an account. Its URL, events and name change in place; a new `secretVersion` rotates its secret in place (the old one signs nothing more). The service shows the secret at creation and rotation only: an imported webhook's `secret` is null until a rotation. */
export class Webhook extends pulumi.CustomResource {
  constructor(name: string, args: WebhookArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Webhook", outputs: ["webhookId", "secret"], secretInputs: [], secrets: ["secret"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Webhook extends WebhookOutputProperties {}

/** The inputs of an Endpoint. */
export interface EndpointArgs extends CommonArgs {
  /** The endpoint's name, which `route` takes. */
  name: pulumi.Input<string>;
  /** The floor of active capacity, in the endpoint's load units per second. Default 0. */
  minLoad?: pulumi.Input<number>;
  /** The floor of total (active and inactive) capacity. Default 0. */
  minColdLoad?: pulumi.Input<number>;
  /** The share of active capacity load should use, in (0, 1]: 0.9 leaves 11% headroom. Default 0.9. */
  targetUtil?: pulumi.Input<number>;
  /** Total capacity as a multiple of active load (workers kept loaded but inactive). Default 2.5. */
  coldMult?: pulumi.Input<number>;
  /** Workers kept with the model loaded, active or inactive (0 lets the endpoint scale to zero). Default 5. */
  coldWorkers?: pulumi.Input<number>;
  /** The cap on all workers, at least `coldWorkers`. Default 20. */
  maxWorkers?: pulumi.Input<number>;
  /** Seconds a request may wait at one worker before the router passes it over. Default 30. */
  maxQueueTime?: pulumi.Input<number>;
  /** Seconds of endpoint-wide queueing above which the autoscaler scales up hard. Default 10. */
  targetQueueTime?: pulumi.Input<number>;
  /** Seconds without requests before the endpoint may scale down (to zero where the targets allow); negative: never. */
  inactivityTimeout?: pulumi.Input<number>;
  /** Whether the autoscaler manages its workers. Default: `"active"`. */
  state?: pulumi.Input<"active" | "suspended" | "stopped">;
}

/** The outputs of an Endpoint, besides its inputs. */
export interface EndpointOutputProperties {
  /** The endpoint's id (also the resource's id). */
  readonly endpointId: pulumi.Output<number>;
  /** The endpoint's own key, which `/route/` takes (a secret output). */
  readonly apiKey: pulumi.Output<string>;
}

/** A serverless endpoint: the scaling targets the service's autoscaler keeps its workers to (a `WorkerGroup` says what a worker runs and where). Requests reach a ready worker through the route (the SDK's `route`). Every target and the state change in place; the name too. Declaring a name the account has already takes that endpoint over. Destroy deletes it with its worker groups, and destroys their workers. */
export class Endpoint extends pulumi.CustomResource {
  constructor(name: string, args: EndpointArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Endpoint", outputs: ["endpointId", "apiKey"], secretInputs: [], secrets: ["apiKey"] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Endpoint extends EndpointOutputProperties {}

/** The inputs of a WorkerGroup. */
export interface WorkerGroupArgs extends CommonArgs {
  /** The endpoint its workers serve (an Endpoint's `endpointId`). */
  endpointId: pulumi.Input<number>;
  /** The template its workers are created from (a Template's `hashId`). */
  templateHash: pulumi.Input<string>;
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: pulumi.Input<string>;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: pulumi.Input<number>;
  /** Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. */
  filters?: pulumi.Input<OfferFilters>;
  /** The least GPU memory of a worker, GB. Default: `24`. */
  gpuRam?: pulumi.Input<number>;
  /** Workers of this group kept loaded (the endpoint's `coldWorkers` when not given). */
  coldWorkers?: pulumi.Input<number>;
  /** Workers made to measure performance while the group starts. Default: `3`. */
  testWorkers?: pulumi.Input<number>;
  /** Extra arguments of the workers' creation. */
  launchArgs?: pulumi.Input<string>;
}

/** The outputs of a WorkerGroup, besides its inputs. */
export interface WorkerGroupOutputProperties {
  /** The worker group's id (also the resource's id). */
  readonly workerGroupId: pulumi.Output<number>;
  /** The criteria as the service keeps them (the CLI's query text). */
  readonly searchParams: pulumi.Output<string>;
}

/** A worker group of a serverless `Endpoint`: the template its workers are created from and the offers they are rented on. The service's autoscaler rents, starts, stops and destroys the workers. The template, criteria and worker counts change in place; a new template (a Template's new `hashId` after an edit) rolls the workers one at a time, requests still answered. Another endpoint replaces it. Destroy deletes it and destroys its workers. */
export class WorkerGroup extends pulumi.CustomResource {
  constructor(name: string, args: WorkerGroupArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "WorkerGroup", outputs: ["workerGroupId", "searchParams"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface WorkerGroup extends WorkerGroupOutputProperties {}

/** The inputs of a Deployment. */
export interface DeploymentArgs extends CommonArgs {
  /** The deployment's name: its code declares a deployment of this name. */
  name: pulumi.Input<string>;
  /** The deployment's tag (a name has one deployment per tag). Default: `"default"`. */
  tag?: pulumi.Input<string>;
  /** The folder of its Python package (with `__init__.py`), or a single `.py` module (the file a program of the service's own client deploys); its content hash decides a new version. */
  codeFolder: pulumi.Input<string>;
  /** The image its workers run (`repo/name:tag`), holding the service's worker program. */
  image: pulumi.Input<string>;
  /** Environment variables of its workers, written into the bundle's config in name order (as the service's client writes `image.env(...)`: a change is a new version). */
  environment?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Offer criteria of its workers, the CLI's query text (`gpu_name=RTX_4090 num_gpus=1`), sent after the service client's defaults (verified, rentable, not rented offers). */
  searchParams?: pulumi.Input<string>;
  /** Disk of each worker, GB. Default: `50`. */
  storage?: pulumi.Input<number>;
  /** The floor of active capacity, in the endpoint's load units per second. Default 0. */
  minLoad?: pulumi.Input<number>;
  /** The floor of total (active and inactive) capacity. Default 0. */
  minColdLoad?: pulumi.Input<number>;
  /** The share of active capacity load should use, in (0, 1]: 0.9 leaves 11% headroom. Default 0.9. */
  targetUtil?: pulumi.Input<number>;
  /** Total capacity as a multiple of active load (workers kept loaded but inactive). Default 2.5. */
  coldMult?: pulumi.Input<number>;
  /** Workers kept with the model loaded, active or inactive (0 lets the endpoint scale to zero). Default 5. */
  coldWorkers?: pulumi.Input<number>;
  /** The cap on all workers, at least `coldWorkers`. Default 20. */
  maxWorkers?: pulumi.Input<number>;
  /** Seconds a request may wait at one worker before the router passes it over. Default 30. */
  maxQueueTime?: pulumi.Input<number>;
  /** Seconds of endpoint-wide queueing above which the autoscaler scales up hard. Default 10. */
  targetQueueTime?: pulumi.Input<number>;
  /** Seconds without requests before the endpoint may scale down (to zero where the targets allow); negative: never. */
  inactivityTimeout?: pulumi.Input<number>;
}

/** The outputs of a Deployment, besides its inputs. */
export interface DeploymentOutputProperties {
  /** The deployment's id (also the resource's id). */
  readonly deploymentId: pulumi.Output<number>;
  /** The endpoint the service made for it. */
  readonly endpointId: pulumi.Output<number>;
  /** That endpoint's name, which `route` takes. */
  readonly endpointName: pulumi.Output<string>;
  /** The worker group the service made for it. */
  readonly workerGroupId: pulumi.Output<number>;
  /** Its newest version (the code last pushed). */
  readonly currentVersionId: pulumi.Output<number>;
  /** The newest version whose workers served (none until one did). */
  readonly lastHealthyVersionId: pulumi.Output<number>;
  /** The content hash of the code's bundle. */
  readonly codeHash: pulumi.Output<string>;
}

/** Code served as a serverless deployment: a folder holding a Python package (imported as `deployment` on each worker, it declares `vastai.serverless.remote.Deployment(name=<name>)` and its remote functions, one with a benchmark), the image its workers run, and the scaling of the endpoint the service makes for it. Its bundle's content hash is computed at preview: a changed folder is one update that makes a new version (the workers roll onto it; a version whose workers fail never serves), an unchanged one changes nothing. Image, environment, criteria and storage make a new version too; scaling changes in place; a new name or tag replaces it. It puts what the service's remote-function client puts for the same code and settings (its env flags and default criteria), so a program of that client deploying the same `.py` file with the same name, tag, image, storage, `image.env(...)` and scaling finds it unchanged and calls it by name. Destroy deletes it with its endpoint, group and workers. */
export class Deployment extends pulumi.CustomResource {
  constructor(name: string, args: DeploymentArgs, opts: ResourceOptions = {}) {
    const { type, props, options } = registration({ name: "Deployment", outputs: ["deploymentId", "endpointId", "endpointName", "workerGroupId", "currentVersionId", "lastHealthyVersionId", "codeHash"], secretInputs: [], secrets: [] }, name, args, opts);
    super(type, name, props, options);
  }
}
export interface Deployment extends DeploymentOutputProperties {}

/** The arguments of getOffers. */
export interface GetOffersArgs {
  /** GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter). */
  gpuModel?: string;
  /** GPUs wanted on the machine (a `num_gpus` filter). */
  gpuCount?: number;
  /** Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. */
  filters?: OfferFilters;
  /** Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`. */
  order?: [string, "asc" | "desc"][];
  /** The market to rent in. Default: `"on-demand"`. */
  offerType?: OfferType;
  /** The most to pay, $/hour: offers above it are left out. */
  maxPricePerHour?: number;
  /** At most this many offers (1 to 1000). Default: `20`. */
  limit?: number;
}

/** What getOffers answers. */
export interface GetOffersResult {
  /** The offers found, best first. */
  readonly offers: ({ id: number; gpuName: string; numGpus: number; gpuRam: number | null; pricePerHour: number; reliability: number | null; geolocation: string | null; verified: boolean | null })[];
}

/** The offers of the market that match criteria written as an Instance's (`gpuModel`, `gpuCount`, `filters`, `order`, `offerType`, `maxPricePerHour`), rentable now, in the order an Instance with those criteria tries them (cheapest first unless `order` says otherwise): to see what a rental would cost before making it, or to pin one with `offerId`. */
export function getOffers(args: GetOffersArgs = {}, opts?: InvokeOptions): Promise<GetOffersResult> {
  return invokeFunction("getOffers", args, opts);
}

/** getOffers, of arguments that may be other resources' outputs: its result is an output. */
export function getOffersOutput(args: FunctionInputs<GetOffersArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetOffersResult> {
  return invokeOutput("getOffers", args, opts);
}

/** The arguments of getTemplates. */
export interface GetTemplatesArgs {
  /** `{ <field>: { <operator>: <value> } }` over the template fields, e.g. `{ image: { eq: "pytorch/pytorch" }, recommended: { eq: true } }`. */
  filters?: TemplateFilters;
  /** Only templates of this name (a `name` filter). */
  name?: string;
}

/** What getTemplates answers. */
export interface GetTemplatesResult {
  /** The templates found. */
  readonly templates: ({ id: number; hashId: string; name: string | null; image: string | null; tag: string | null })[];
}

/** The templates the account can see (public ones and its own) that match a search in the operators of the offer search (`filters`, the service's `select_filters` over template fields such as name, image, tag, recommended, creator_id), or by `name`. An Instance made from one takes its `hashId`. */
export function getTemplates(args: GetTemplatesArgs = {}, opts?: InvokeOptions): Promise<GetTemplatesResult> {
  return invokeFunction("getTemplates", args, opts);
}

/** getTemplates, of arguments that may be other resources' outputs: its result is an output. */
export function getTemplatesOutput(args: FunctionInputs<GetTemplatesArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetTemplatesResult> {
  return invokeOutput("getTemplates", args, opts);
}

/** The arguments of getInstance. */
export interface GetInstanceArgs {
  /** The instance's id. */
  id: number;
}

/** What getInstance answers. */
export interface GetInstanceResult {
  /** The instance's id. */
  readonly id: number;
  /** Its label (empty when it has none). */
  readonly label: string;
  /** Its status as the service reports it (`running`, `loading`, `exited`, ...). */
  readonly status: string | null;
  /** What it costs, $/hour. */
  readonly pricePerHour: number | null;
  /** The host to reach it over SSH. */
  readonly sshHost: string | null;
  /** The port to reach it over SSH. */
  readonly sshPort: number | null;
  /** Its GPU model. */
  readonly gpuName: string | null;
  /** Its GPU count. */
  readonly numGpus: number | null;
  /** Where the machine is. */
  readonly geolocation: string | null;
  /** The creation token it carries (`GPU_RENTAL_TOKEN`), when gpu-rental rented it. */
  readonly token: string | null;
}

/** One instance of the account, by id, as the service shows it now (an instance made elsewhere, say). An id the account does not have fails. */
export function getInstance(args: GetInstanceArgs, opts?: InvokeOptions): Promise<GetInstanceResult> {
  return invokeFunction("getInstance", args, opts);
}

/** getInstance, of arguments that may be other resources' outputs: its result is an output. */
export function getInstanceOutput(args: FunctionInputs<GetInstanceArgs>, opts?: InvokeOptions): pulumi.Output<GetInstanceResult> {
  return invokeOutput("getInstance", args, opts);
}

/** The arguments of getInstances. */
export interface GetInstancesArgs {
  /** Only instances with this label. */
  label?: string;
  /** Only instances whose creation token has this prefix (e.g. `nightly42`). */
  tokenPrefix?: string;
  /** Only instances with this status (`running`, `loading`, `exited`, ...). */
  status?: string;
}

/** What getInstances answers. */
export interface GetInstancesResult {
  /** The instances found, by id. */
  readonly instances: ({ id: number; label: string; status: string | null; pricePerHour: number | null; sshHost: string | null; sshPort: number | null; gpuName: string | null; numGpus: number | null; geolocation: string | null; token: string | null })[];
}

/** The account's instances, by id, narrowed by `label`, by the prefix of the creation token they carry (`tokenPrefix`: a run's, or a stack's, as `gpu-rental sweep` takes it) and by `status`; all of them when none is given. */
export function getInstances(args: GetInstancesArgs = {}, opts?: InvokeOptions): Promise<GetInstancesResult> {
  return invokeFunction("getInstances", args, opts);
}

/** getInstances, of arguments that may be other resources' outputs: its result is an output. */
export function getInstancesOutput(args: FunctionInputs<GetInstancesArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetInstancesResult> {
  return invokeOutput("getInstances", args, opts);
}

/** The arguments of getNetworkVolumeOffers. */
export interface GetNetworkVolumeOffersArgs {
  /** The volume offer search: field filters, `order` and `limit`, e.g. `{ geolocation: { in: ["US", "CA"] }, limit: 5 }`. */
  q?: VolumeQuery;
  /** GB wanted: offers with less free space are left out. */
  size?: number;
}

/** What getNetworkVolumeOffers answers. */
export interface GetNetworkVolumeOffersResult {
  /** The offers found. */
  readonly offers: ({ id: number; diskSpace: number; storageCost: number; reliability: number | null; geolocation: string | null; verified: boolean | null })[];
}

/** The network volume offers that match a search written as a NetworkVolume's `q`, cheapest storage first unless `q` orders them otherwise; with `size`, only those with room for it. Network volumes are not generally released: an account without them is refused (NetworkVolumesUnavailableError). */
export function getNetworkVolumeOffers(args: GetNetworkVolumeOffersArgs = {}, opts?: InvokeOptions): Promise<GetNetworkVolumeOffersResult> {
  return invokeFunction("getNetworkVolumeOffers", args, opts);
}

/** getNetworkVolumeOffers, of arguments that may be other resources' outputs: its result is an output. */
export function getNetworkVolumeOffersOutput(args: FunctionInputs<GetNetworkVolumeOffersArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetNetworkVolumeOffersResult> {
  return invokeOutput("getNetworkVolumeOffers", args, opts);
}

/** The arguments of getLocalVolumeOffers. */
export interface GetLocalVolumeOffersArgs {
  /** The volume offer search: field filters, `order` and `limit`, e.g. `{ geolocation: { in: ["US", "CA"] }, limit: 5 }`. */
  q?: VolumeQuery;
  /** GB wanted: offers with less free space are left out. */
  size?: number;
}

/** What getLocalVolumeOffers answers. */
export interface GetLocalVolumeOffersResult {
  /** The offers found. */
  readonly offers: ({ id: number; diskSpace: number; storageCost: number; reliability: number | null; geolocation: string | null; verified: boolean | null })[];
}

/** The local volume offers that match a search (one per machine on the market: a local volume lives on its machine's disk, for the instances of that machine), cheapest storage first unless `q` orders them otherwise; with `size`, only those with room for it. */
export function getLocalVolumeOffers(args: GetLocalVolumeOffersArgs = {}, opts?: InvokeOptions): Promise<GetLocalVolumeOffersResult> {
  return invokeFunction("getLocalVolumeOffers", args, opts);
}

/** getLocalVolumeOffers, of arguments that may be other resources' outputs: its result is an output. */
export function getLocalVolumeOffersOutput(args: FunctionInputs<GetLocalVolumeOffersArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetLocalVolumeOffersResult> {
  return invokeOutput("getLocalVolumeOffers", args, opts);
}

/** The arguments of getEnvVars. */
export type GetEnvVarsArgs = Record<string, never>;

/** What getEnvVars answers. */
export interface GetEnvVarsResult {
  /** The variables' names, sorted. */
  readonly names: string[];
}

/** The names of the account's environment variables (upper-cased, sorted): what every instance created now gets. Their values are never shown, by the service nor here. An EnvVar declaring one of them takes it over. */
export function getEnvVars(args: GetEnvVarsArgs = {}, opts?: InvokeOptions): Promise<GetEnvVarsResult> {
  return invokeFunction("getEnvVars", args, opts);
}

/** getEnvVars, of arguments that may be other resources' outputs: its result is an output. */
export function getEnvVarsOutput(args: FunctionInputs<GetEnvVarsArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetEnvVarsResult> {
  return invokeOutput("getEnvVars", args, opts);
}

/** The arguments of getUser. */
export type GetUserArgs = Record<string, never>;

/** What getUser answers. */
export interface GetUserResult {
  /** The user's id. */
  readonly id: number;
  /** The account's email address. */
  readonly email: string;
  /** The user name, when the account has one. */
  readonly username: string | null;
  /** The user's full name, when given. */
  readonly fullName: string | null;
  /** The credit left, $ (null when the service's answer does not say). */
  readonly credit: number | null;
  /** Whether the account logs in with a second factor. */
  readonly twoFactor: boolean;
}

/** The account the provider acts as (its key's user): who it is, and its credit in $ at the time of the call. A program can check that it deploys into the account it means to, or export what is left to spend. */
export function getUser(args: GetUserArgs = {}, opts?: InvokeOptions): Promise<GetUserResult> {
  return invokeFunction("getUser", args, opts);
}

/** getUser, of arguments that may be other resources' outputs: its result is an output. */
export function getUserOutput(args: FunctionInputs<GetUserArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetUserResult> {
  return invokeOutput("getUser", args, opts);
}

/** The arguments of getSshKeys. */
export type GetSshKeysArgs = Record<string, never>;

/** What getSshKeys answers. */
export interface GetSshKeysResult {
  /** The keys, oldest first. */
  readonly keys: ({ id: number; publicKey: string; createdAt: number | null })[];
}

/** The public keys registered on the account, oldest first, whoever registered them (an SshKey of this or another stack, the service's console, a script): to check that a key is there, or to find the id to import. */
export function getSshKeys(args: GetSshKeysArgs = {}, opts?: InvokeOptions): Promise<GetSshKeysResult> {
  return invokeFunction("getSshKeys", args, opts);
}

/** getSshKeys, of arguments that may be other resources' outputs: its result is an output. */
export function getSshKeysOutput(args: FunctionInputs<GetSshKeysArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetSshKeysResult> {
  return invokeOutput("getSshKeys", args, opts);
}

/** The arguments of getInvoices. */
export interface GetInvoicesArgs {
  /** The period's start, seconds since 1970: rows (a charge's end, a payment's moment) from then on. Default: all. */
  from?: number;
  /** The period's end, seconds since 1970. Default: now. */
  to?: number;
}

/** What getInvoices answers. */
export interface GetInvoicesResult {
  /** The credit left, $ (now, whatever the period). */
  readonly credit: number;
  /** The sum of the period's charges, $. */
  readonly charged: number;
  /** Each charge and payment, oldest first. */
  readonly items: ({ type: string; instanceId: number | null; amount: number; start: number; end: number; description: string | null })[];
}

/** The account's billing at the time of the call: its credit, what its instances have cost so far, and each charge and payment, oldest first; within a period when `from` or `to` says (a charge counts by its end). */
export function getInvoices(args: GetInvoicesArgs = {}, opts?: InvokeOptions): Promise<GetInvoicesResult> {
  return invokeFunction("getInvoices", args, opts);
}

/** getInvoices, of arguments that may be other resources' outputs: its result is an output. */
export function getInvoicesOutput(args: FunctionInputs<GetInvoicesArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetInvoicesResult> {
  return invokeOutput("getInvoices", args, opts);
}

/** The arguments of getTeamRoles. */
export type GetTeamRolesArgs = Record<string, never>;

/** What getTeamRoles answers. */
export interface GetTeamRolesResult {
  /** The roles, in the order the service lists them. */
  readonly roles: { id: number; name: string; permissions: Record<string, unknown> }[];
}

/** The roles of the team the account is, the owner's left out (as the service lists them): each role's id, name and permission categories. The account must be a team. */
export function getTeamRoles(args: GetTeamRolesArgs = {}, opts?: InvokeOptions): Promise<GetTeamRolesResult> {
  return invokeFunction("getTeamRoles", args, opts);
}

/** getTeamRoles, of arguments that may be other resources' outputs: its result is an output. */
export function getTeamRolesOutput(args: FunctionInputs<GetTeamRolesArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetTeamRolesResult> {
  return invokeOutput("getTeamRoles", args, opts);
}

/** The arguments of getEndpoints. */
export type GetEndpointsArgs = Record<string, never>;

/** What getEndpoints answers. */
export interface GetEndpointsResult {
  /** The endpoints, in the order the service lists them. */
  readonly endpoints: ({ id: number; name: string; state: string; coldWorkers: number | null; maxWorkers: number | null })[];
}

/** The account's serverless endpoints: each one's id (what `pulumi import` of an Endpoint takes), name, state and worker counts. */
export function getEndpoints(args: GetEndpointsArgs = {}, opts?: InvokeOptions): Promise<GetEndpointsResult> {
  return invokeFunction("getEndpoints", args, opts);
}

/** getEndpoints, of arguments that may be other resources' outputs: its result is an output. */
export function getEndpointsOutput(args: FunctionInputs<GetEndpointsArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetEndpointsResult> {
  return invokeOutput("getEndpoints", args, opts);
}

/** The arguments of getEndpointWorkers. */
export interface GetEndpointWorkersArgs {
  /** The endpoint (an Endpoint's `endpointId`). */
  endpointId: number;
}

/** What getEndpointWorkers answers. */
export interface GetEndpointWorkersResult {
  /** The workers. */
  readonly workers: ({ instanceId: number; status: string; url: string | null; load: number })[];
}

/** An endpoint's workers as the autoscaler sees them now: each one's instance, state (creating, loading, ready, inactive, updating, error, destroying), URL while it serves, and load. */
export function getEndpointWorkers(args: GetEndpointWorkersArgs, opts?: InvokeOptions): Promise<GetEndpointWorkersResult> {
  return invokeFunction("getEndpointWorkers", args, opts);
}

/** getEndpointWorkers, of arguments that may be other resources' outputs: its result is an output. */
export function getEndpointWorkersOutput(args: FunctionInputs<GetEndpointWorkersArgs>, opts?: InvokeOptions): pulumi.Output<GetEndpointWorkersResult> {
  return invokeOutput("getEndpointWorkers", args, opts);
}

/** The arguments of getAuditLogs. */
export interface GetAuditLogsArgs {
  /** Only actions from then on, seconds since 1970. Default: all the service keeps. */
  since?: number;
  /** Only actions whose endpoint contains this text (`instances`, `PUT /api/v0/users/`). Default: all. */
  route?: string;
}

/** What getAuditLogs answers. */
export interface GetAuditLogsResult {
  /** The actions, newest first. */
  readonly entries: ({ time: number; route: string; ipAddress: string | null; apiKeyId: number | null; args: string })[];
}

/** The account's important actions at the time of the call (what `vastai show audit-logs` lists): each change made through the API, newest first, with when, the endpoint, the address and the key that made it; `since` and `route` narrow them. */
export function getAuditLogs(args: GetAuditLogsArgs = {}, opts?: InvokeOptions): Promise<GetAuditLogsResult> {
  return invokeFunction("getAuditLogs", args, opts);
}

/** getAuditLogs, of arguments that may be other resources' outputs: its result is an output. */
export function getAuditLogsOutput(args: FunctionInputs<GetAuditLogsArgs> = {}, opts?: InvokeOptions): pulumi.Output<GetAuditLogsResult> {
  return invokeOutput("getAuditLogs", args, opts);
}

/** The arguments of getGpuPrices. */
export interface GetGpuPricesArgs {
  /** The GPU model, as the market names it (`RTX 4090`; underscores read as spaces). */
  gpuName: string;
  /** How far back the history goes, hours. Default 24. */
  hours?: number;
  /** Hours between the history's points. Default 1. */
  stepHours?: number;
  /** Count verified machines only. Default false (all). */
  verifiedOnly?: boolean;
}

/** What getGpuPrices answers. */
export interface GetGpuPricesResult {
  /** The model. */
  readonly gpuName: string;
  /** Its offers available now. */
  readonly available: number;
  /** Its offers on the market now, rented or not. */
  readonly total: number;
  /** Now: the 10th percentile $/GPU-hour of its available offers (a low bid's reach). */
  readonly priceP10: number | null;
  /** Now: the median $/GPU-hour of its available offers. */
  readonly priceMedian: number | null;
  /** Now: the 90th percentile $/GPU-hour of its available offers. */
  readonly priceP90: number | null;
  /** The prices over the period, oldest first. */
  readonly history: ({ time: number; availableMedian: number | null; rentedMedian: number | null })[];
}

/** A GPU model's prices on the market from the service's GPU metrics: now, the percentiles of its available offers' price per GPU-hour and how many are available; and the medians of available and rented offers over the last `hours`, for choosing a bid. */
export function getGpuPrices(args: GetGpuPricesArgs, opts?: InvokeOptions): Promise<GetGpuPricesResult> {
  return invokeFunction("getGpuPrices", args, opts);
}

/** getGpuPrices, of arguments that may be other resources' outputs: its result is an output. */
export function getGpuPricesOutput(args: FunctionInputs<GetGpuPricesArgs>, opts?: InvokeOptions): pulumi.Output<GetGpuPricesResult> {
  return invokeOutput("getGpuPrices", args, opts);
}
