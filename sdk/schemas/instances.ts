import { z } from "zod";
import { SortDirection } from "./filters";
import { atLeastOneOf } from "./required";

// `actual_status` is read as any string (or null): a status the spec does not name never breaks a client.
/** Statuses from which an instance never reaches `running`. */
export const FAILED_STATUSES: readonly string[] = ["exited", "unknown", "offline"];

export const Runtype = z.enum(["ssh_direct", "ssh_proxy", "ssh", "jupyter_direct", "jupyter_proxy", "jupyter", "args"]);
export type Runtype = z.infer<typeof Runtype>;

/**
 * `runtype` as the service reads it (docs/service-facts.md#requests-real-clients-send): one of the runtypes, or several words as the public Python
 * client joins its flags (`"ssh_direc ssh_proxy"`, `"jupyter_direc ssh_direc ssh_proxy"`; `*_direc` is direct).
 * Several words are one runtype: Jupyter if a Jupyter word is there (direct if one of its words is), else SSH
 * (direct if an SSH word is).
 */
const RUNTYPE_WORD = "(?:jupyter|ssh)(?:_direct?|_proxy)?";
export const RuntypeWords = z.union([
  Runtype,
  z
    .string()
    .regex(new RegExp(`^${RUNTYPE_WORD}(?: ${RUNTYPE_WORD})*$`))
    .transform((text): Runtype => {
      const words = text.split(" ");
      const jupyter = words.some((word) => word.startsWith("jupyter"));
      const direct = words.some((word) => word.startsWith(jupyter ? "jupyter_direc" : "ssh_direc"));
      if (jupyter) return direct ? "jupyter_direct" : "jupyter_proxy";
      return direct ? "ssh_direct" : "ssh_proxy";
    }),
]);

export const TargetState = z.enum(["running", "stopped"]);
export type TargetState = z.infer<typeof TargetState>;

export const VolumeInfo = z.object({
  create_new: z.boolean(),
  volume_id: z.number().int(),
  size: z.number().positive().optional(),
  mount_path: z.string().min(1),
});
export type VolumeInfo = z.infer<typeof VolumeInfo>;

/** The body of `PUT /api/v0/asks/{offer_id}/` (instance creation). */
export const CreateInstanceRequest = atLeastOneOf(
  z.object({
    image: z.string().min(1).optional(),
    template_hash_id: z.string().min(1).optional(),
    label: z.string().optional(),
    disk: z.number().positive().optional(),
    runtype: Runtype.optional(),
    target_state: TargetState.optional(),
    price: z.number().positive().optional(),
    env: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    onstart: z.string().optional(),
    args: z.array(z.string()).optional(),
    args_str: z.string().optional(),
    use_jupyter_lab: z.boolean().optional(),
    jupyter_dir: z.string().optional(),
    python_utf8: z.boolean().optional(),
    lang_utf8: z.boolean().optional(),
    image_login: z.string().optional(),
    cancel_unavail: z.boolean().optional(),
    vm: z.boolean().optional(),
    volume_info: VolumeInfo.optional(),
    /** Machine search filters; merged by key over the template's `extra_filters` (request wins). */
    extra_filters: z.record(z.string(), z.unknown()).optional(),
    client_id: z.string().optional(),
    extra: z.string().optional(),
    force: z.boolean().optional(),
    user: z.string().optional(),
  }).strict(),
  ["image", "template_hash_id"],
  "either image or template_hash_id is required",
);
export type CreateInstanceRequest = z.infer<typeof CreateInstanceRequest>;

export const CreateInstanceResponse = z.looseObject({
  success: z.boolean(),
  new_contract: z.number().int(),
  instance_api_key: z.string().optional(),
});
export type CreateInstanceResponse = z.infer<typeof CreateInstanceResponse>;

const PortBinding = z.array(z.looseObject({ HostIp: z.string().optional(), HostPort: z.string() }));

/** An instance record. Fields beyond the spec's are those the live service sends. */
export const Instance = z.looseObject({
  id: z.number().int(),
  actual_status: z.string().nullable(),
  intended_status: z.string().nullable().optional(),
  cur_state: z.string().nullable().optional(),
  next_state: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  ssh_host: z.string().nullable().optional(),
  ssh_port: z.number().int().nullable().optional(),
  machine_id: z.number().int().nullable().optional(),
  num_gpus: z.number().int().nullable().optional(),
  gpu_name: z.string().nullable().optional(),
  dph_total: z.number().nullable().optional(),
  image_uuid: z.string().nullable().optional(),
  template_hash_id: z.string().nullable().optional(),
  start_date: z.number().nullable().optional(),
  /**
   * `[name, value]` pairs (recorded, and the v1 rows), or `NAME=value` texts (the vendor's description declares texts):
   * read a variable with envValueOf (docs/service-facts.md#where-the-vendors-description-is-wrong).
   */
  extra_env: z.array(z.union([z.array(z.string()).length(2), z.string()])).nullable().optional(),
  onstart: z.string().nullable().optional(),
  status_msg: z.string().nullable().optional(),
  is_bid: z.boolean().nullable().optional(),
  /** Port bindings by container port (recorded), or the bare port numbers the vendor's description declares. */
  ports: z.union([z.record(z.string(), PortBinding), z.array(z.number().int())]).nullable().optional(),
  disk_space: z.number().nullable().optional(),
  geolocation: z.string().nullable().optional(),
  reliability2: z.number().nullable().optional(),
  public_ipaddr: z.string().nullable().optional(),
  direct_port_start: z.number().nullable().optional(),
  direct_port_end: z.number().nullable().optional(),
});
export type Instance = z.infer<typeof Instance>;

/** The retired `GET /api/v0/instances/` (see emulator/INSTANCES.md, "The live service's moves"). */
export const InstanceListResponse = z.looseObject({
  instances_found: z.number().int().optional(),
  instances: z.array(Instance),
});

/** `[{col, dir}]`: the order of `GET /api/v1/instances/` (as the public Python client sends it). */
export const InstanceOrder = z.array(z.object({ col: z.string(), dir: SortDirection }));
export type InstanceOrder = z.infer<typeof InstanceOrder>;

/**
 * A page of `GET /api/v1/instances/`: the rows (`start_date` a number, `extra_env` `[name, value]` pairs, as
 * `Instance` says) and `next_token`, the `after_token` of the next page (empty or absent on the last).
 */
export const InstancePageResponse = z.looseObject({
  instances: z.array(Instance),
  total_instances: z.number().int().optional(),
  next_token: z.string().nullable().optional(),
});
export type InstancePageResponse = z.infer<typeof InstancePageResponse>;
/** `GET /api/v0/instances/{id}/`: `instances` is one object, or null when the id is unknown or not yours. */
export const InstanceResponse = z.looseObject({ instances: Instance.nullable() });

/** `PUT /api/v0/instances/{id}/`: start/stop (`state`) and relabel (`label`). */
export const UpdateInstanceRequest = atLeastOneOf(
  z.object({ state: TargetState.optional(), label: z.string().optional() }).strict(),
  ["state", "label"],
  "state or label is required",
  [],
);
export type UpdateInstanceRequest = z.infer<typeof UpdateInstanceRequest>;

/**
 * `PUT /api/v0/instances/bid_price/{id}/`: a new bid ($/hour, at most 32 as the vendor describes it) for an
 * interruptible instance. The service asks for `client_id` ("me") beside it. The public client sends `price: null`
 * without `--price` (the offer's minimum, the winning bid); the vendor describes a number, which the SDK sends.
 */
export const ChangeBidRequest = z.object({ client_id: z.string(), price: z.number().max(32).nullable() });
export type ChangeBidRequest = z.infer<typeof ChangeBidRequest>;

/** `PUT /api/v0/instances/reboot/{id}/` and `.../recycle/{id}/`: an empty body (the public client sends `{}`). */
export const RestartRequest = z.looseObject({});
export type RestartRequest = z.infer<typeof RestartRequest>;

export const SuccessResponse = z.looseObject({ success: z.boolean() });

/** The value of an instance's environment variable `name`, whichever form `extra_env` has (pairs or `NAME=value` texts). */
export function envValueOf(extraEnv: readonly (readonly string[] | string)[] | null | undefined, name: string): string | undefined {
  for (const entry of extraEnv ?? []) {
    if (typeof entry === "string") {
      if (entry.startsWith(`${name}=`)) return entry.slice(name.length + 1);
    } else if (entry[0] === name) return entry[1];
  }
  return undefined;
}
