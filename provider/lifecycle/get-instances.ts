import { z } from "zod";
import { hasPrefix, Instance, tokenOfInstance } from "../../sdk";
import type { ObjectDescription, PropertyDescription } from "./description";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getInstances function: the account's instances, narrowed by label, creation-token prefix and status. Read-only. */

/** An instance as the functions show it (getInstances' items, getInstance's result). */
export const INSTANCE_SUMMARY: Record<string, PropertyDescription> = {
  id: { type: "integer", description: "The instance's id." },
  label: { type: "string", description: "Its label (empty when it has none)." },
  status: { type: "string", nullable: true, description: "Its status as the service reports it (`running`, `loading`, `exited`, ...)." },
  pricePerHour: { type: "number", nullable: true, description: "What it costs, $/hour." },
  sshHost: { type: "string", nullable: true, description: "The host to reach it over SSH." },
  sshPort: { type: "integer", nullable: true, description: "The port to reach it over SSH." },
  gpuName: { type: "string", nullable: true, description: "Its GPU model." },
  numGpus: { type: "integer", nullable: true, description: "Its GPU count." },
  geolocation: { type: "string", nullable: true, description: "Where the machine is." },
  token: { type: "string", nullable: true, description: "The creation token it carries (`GPU_RENTAL_TOKEN`), when gpu-rental rented it." },
};
export const INSTANCE_SUMMARY_REQUIRED = ["id", "label"];

const INSTANCE_ITEM: ObjectDescription = {
  name: "InstanceSummary",
  description: "An instance of the account, as the service shows it.",
  properties: INSTANCE_SUMMARY,
  required: INSTANCE_SUMMARY_REQUIRED,
};

const PREFIX_RULE = "tokenPrefix is 1 to 20 lowercase letters or digits (the part of a token before its dash)";

const GetInstancesArgs = z.object({
  label: z.string().optional(),
  tokenPrefix: z.string().regex(/^[a-z0-9]{1,20}$/, PREFIX_RULE).optional(),
  status: z.string().min(1).optional(),
});
type GetInstancesArgs = z.infer<typeof GetInstancesArgs>;

export type InstanceSummary = { id: number; label: string; token: string | null } & Record<string, unknown>;

export const GET_INSTANCES: LookupFunction<GetInstancesArgs, { instances: InstanceSummary[] }> = {
  description: {
    name: "getInstances",
    description:
      "The account's instances, by id, narrowed by `label`, by the prefix of the creation token they carry (`tokenPrefix`: a " +
      "run's, or a stack's, as `gpu-rental sweep` takes it) and by `status`; all of them when none is given.",
    inputs: {
      label: { type: "string", description: "Only instances with this label." },
      tokenPrefix: { type: "string", description: "Only instances whose creation token has this prefix (e.g. `nightly42`)." },
      status: { type: "string", description: "Only instances with this status (`running`, `loading`, `exited`, ...)." },
    },
    outputs: { instances: { type: "array", items: { type: "object", object: INSTANCE_ITEM }, description: "The instances found, by id." } },
    requiredOutputs: ["instances"],
    example: { args: { label: "trainer", status: "running" }, exports: "instances" },
  },
  args: specOf("getInstances", GetInstancesArgs),
  async invoke(args, op) {
    // The service narrows by label; the token sits in the environment, which it cannot filter on.
    const listed = await op.client.instances.list(args.label !== undefined ? { filters: { label: { eq: args.label } } } : {});
    const wanted = listed.filter(
      (i) => (args.tokenPrefix === undefined || hasPrefix(tokenOfInstance(i), args.tokenPrefix)) && (args.status === undefined || i.actual_status === args.status),
    );
    return { instances: wanted.map(instanceSummary) };
  },
};

export function instanceSummary(instance: Instance): InstanceSummary {
  return {
    id: instance.id,
    label: instance.label ?? "",
    status: instance.actual_status ?? null,
    pricePerHour: instance.dph_total ?? null,
    sshHost: instance.ssh_host ?? null,
    sshPort: instance.ssh_port ?? null,
    gpuName: instance.gpu_name ?? null,
    numGpus: instance.num_gpus ?? null,
    geolocation: instance.geolocation ?? null,
    token: tokenOfInstance(instance) ?? null,
  };
}
