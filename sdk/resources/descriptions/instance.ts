import { ADOPT_ID, EnumDescription, ResourceDescription } from "./description";

const RUNTYPE: EnumDescription = {
  name: "Runtype",
  description: "How an instance is launched and reached.",
  values: [
    { value: "ssh_direct", description: "SSH straight to the machine's own port (the ssh host and port outputs)." },
    { value: "ssh_proxy", description: "SSH through the service's proxy." },
    { value: "ssh", description: "SSH, direct where the machine allows it." },
    { value: "jupyter_direct", description: "Jupyter straight on the machine's port." },
    { value: "jupyter_proxy", description: "Jupyter through the service's proxy." },
    { value: "jupyter", description: "Jupyter, direct where the machine allows it." },
    { value: "args", description: "The image's own entrypoint, with `argsStr` as its arguments." },
  ],
};

const TARGET_STATE: EnumDescription = {
  name: "TargetState",
  description: "The state an instance is kept in.",
  values: [
    { value: "running", description: "Running (and billed for compute)." },
    { value: "stopped", description: "Stopped: the disk is kept (and billed), the GPUs are released." },
  ],
};

const OFFER_TYPE: EnumDescription = {
  name: "OfferType",
  description: "The market an offer is rented in.",
  values: [
    { value: "on-demand", description: "At the offer's price, never interrupted." },
    { value: "ondemand", description: "The same as `on-demand`." },
    { value: "bid", description: "Interruptible, at the bid `price`: outbid, the instance is stopped." },
  ],
};

const BOOT_FAILURE: EnumDescription = {
  name: "BootFailurePolicy",
  description: "What to do when an instance fails to boot (exited, unknown, offline).",
  values: [
    { value: "fail", description: "Destroy it and report the error." },
    { value: "replace", description: "Destroy it and rent another offer, at most `maxBootAttempts` rentals in all." },
  ],
};

const LIFETIME_END: EnumDescription = {
  name: "LifetimeEnd",
  description: "What an instance does at the end of its `maxLifetime`.",
  values: [
    { value: "destroy", description: "Destroy itself: billing ends." },
    { value: "stop", description: "Stop itself: the disk is kept (and billed), the GPUs are released." },
  ],
};

const IDLE_ACTION: EnumDescription = {
  name: "IdleAction",
  description: "What an instance does when its GPUs stayed idle for `idleTimeout`.",
  values: [
    { value: "stop", description: "Stop itself: the disk is kept (and billed)." },
    { value: "destroy", description: "Destroy itself: billing ends." },
  ],
};

/** A rented GPU instance. */
export const INSTANCE: ResourceDescription = {
  name: "Instance",
  description:
    "A rented GPU instance. Label and target state change in place; so do new criteria that the rented machine still meets, and " +
    "the boot-failure policy (recorded, nothing sent). Any other change rents a new instance. The offer actually rented is an " +
    "output: a changed market or a refresh never replaces a running instance.",
  inputs: {
    offerId: { type: "integer", description: "Rent exactly this offer. Otherwise the cheapest offer matching the criteria is rented." },
    gpuModel: { type: "string", description: 'GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter).' },
    gpuCount: { type: "integer", description: "GPUs wanted on the machine (a `num_gpus` filter)." },
    filters: {
      type: "map",
      values: { type: "any" },
      tsType: "OfferFilters",
      description:
        "Any offer-search filters, e.g. `{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`. Criteria are placement rules: " +
        "new ones that the rented machine still meets change nothing.",
    },
    order: {
      type: "array",
      items: { type: "array", items: { type: "string" } },
      tsType: '[string, "asc" | "desc"][]',
      description: 'Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`.',
    },
    offerType: { type: "string", enum: OFFER_TYPE, tsType: "OfferType", default: "on-demand", description: "The market to rent in." },
    maxPricePerHour: { type: "number", description: "The most to pay, $/hour: offers above it are not rented." },
    image: { type: "string", description: "The container image; may be left out when `templateHashId` gives one." },
    templateHashId: { type: "string", description: "Create from this template (its `hashId` output): its values are the base, the inputs here win." },
    label: { type: "string", description: "The instance's label; changed in place." },
    disk: { type: "number", description: "Local disk in GB; default 8 (or the template's)." },
    env: { type: "map", values: { type: "string" }, description: "Environment variables of the container." },
    onstart: { type: "string", description: "A script run when the instance starts." },
    volume: {
      type: "object",
      object: {
        name: "InstanceVolume",
        description: "A network volume mounted into an instance.",
        properties: {
          volumeId: { type: "integer", description: "An existing network volume of the account (e.g. a NetworkVolume's `volumeId`)." },
          offerId: { type: "integer", description: "Or a new volume made from this network volume offer, with the instance." },
          size: { type: "number", description: "The new volume's size in GB (with `offerId`)." },
          mountPath: { type: "string", description: "Where it is mounted in the container, e.g. `/data`." },
        },
        required: ["mountPath"],
      },
      description:
        "A network volume mounted at `mountPath`: an existing one (`volumeId`), or a new one of `size` GB from a volume offer " +
        "(`offerId`). Changing it replaces the instance.",
    },
    runtype: { type: "string", enum: RUNTYPE, tsType: "Runtype", description: "Launch mode; default `ssh_direct` (or the template's), which gives the ssh host and port outputs." },
    targetState: { type: "string", enum: TARGET_STATE, tsType: "TargetState", default: "running", description: "`running` or `stopped`; changed in place." },
    price: { type: "number", description: "The bid of an interruptible rental ($/hour); default `maxPricePerHour`, else the offer's minimum bid." },
    argsStr: { type: "string", description: "Replaces the image's command (runtype `args`)." },
    useJupyterLab: { type: "boolean", description: "Jupyter Lab rather than the classic notebook." },
    jupyterDir: { type: "string", description: "The folder Jupyter opens in." },
    pythonUtf8: { type: "boolean", description: "Sets PYTHONUTF8=1 in the container." },
    langUtf8: { type: "boolean", description: "Sets a UTF-8 locale in the container." },
    imageLogin: { type: "string", secret: true, description: "Registry login for a private image, `-u <user> -p <token> <registry>`: always kept secret." },
    cancelUnavail: { type: "boolean", description: "Fail at once when the instance cannot start right away." },
    vm: { type: "boolean", description: "A VM instead of a container." },
    onBootFailure: {
      type: "string",
      enum: BOOT_FAILURE,
      tsType: '"fail" | "replace"',
      default: "fail",
      description: "When the instance fails to boot: `fail` (destroyed, and the error reported), or `replace` it with another offer.",
    },
    maxBootAttempts: {
      type: "integer",
      default: 3,
      description:
        "Rentals tried in all with `onBootFailure: replace`, and for an instance that does not come up within the boot deadline " +
        "(whatever the policy: the service has accepted one offer twice and left the second instance never booting).",
    },
    maxLifetime: {
      type: "string",
      description:
        'The instance ends itself this long after its boot (`"90s"`, `"15m"`, `"6h"`, `"2d"`), even when the program and the machine ' +
        "it ran on are gone: a watchdog started from onstart calls the service with the instance's own key. Needs an SSH or Jupyter " +
        "runtype (refused at preview with runtype `args`). Changing it replaces nothing: the running watchdog keeps its policy " +
        "(`lifetimeInEffect`); the new one applies to the next instance rented. See docs/spend-guard.md.",
    },
    onLifetimeEnd: { type: "string", enum: LIFETIME_END, default: "destroy", description: "What the instance does at the end of `maxLifetime`." },
    idleTimeout: { type: "string", description: "The instance ends itself when every GPU stayed below `idleThreshold` (read with nvidia-smi) for this long." },
    idleAction: { type: "string", enum: IDLE_ACTION, default: "stop", description: "What the instance does when idle for `idleTimeout`." },
    idleThreshold: { type: "number", default: 10, description: "GPU utilisation, percent, below which a GPU counts as idle." },
    adoptId: ADOPT_ID,
  },
  outputs: {
    instanceId: { type: "integer", description: "The instance's id (also the resource's id)." },
    status: { type: "string", nullable: true, description: "The instance's status as the service reports it (`running`, `loading`, ...)." },
    sshHost: { type: "string", nullable: true, description: "The host to reach it over SSH." },
    sshPort: { type: "integer", nullable: true, description: "The port to reach it over SSH." },
    rentedOfferId: { type: "integer", nullable: true, description: "The offer rented; null for an adopted or imported instance." },
    rentedOffer: {
      type: "map",
      values: { type: "any" },
      nullable: true,
      tsType: "Record<string, unknown>",
      description: "The offer as it was when rented (its fields, as the offer search shows them): what new criteria are checked against.",
    },
    machineId: { type: "integer", nullable: true, description: "The machine it runs on." },
    gpuName: { type: "string", nullable: true, description: "Its GPU model." },
    numGpus: { type: "integer", nullable: true, description: "Its GPU count." },
    pricePerHour: { type: "number", nullable: true, description: "What it costs, $/hour." },
    geolocation: { type: "string", nullable: true, description: "Where the machine is." },
    instanceApiKey: { type: "string", nullable: true, secret: true, description: "The instance's own restricted key (`CONTAINER_API_KEY`); kept secret in state." },
    lifetimeInEffect: { type: "string", nullable: true, description: "The lifetime policy the instance's watchdog runs with (null: none)." },
  },
  requiredOutputs: ["instanceId"],
};
