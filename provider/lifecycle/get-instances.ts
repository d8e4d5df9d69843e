import { z } from "zod";
import { hasPrefix, Instance, tokenOfInstance } from "../../sdk";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getInstances function: the account's instances, narrowed by label, creation-token prefix and status. Read-only. */

/** An instance as the functions show it (getInstances' items, getInstance's result). */
export const InstanceSummary = z.object({
  id: z.int().meta({ description: "The instance's id." }),
  label: z.string().meta({ description: "Its label (empty when it has none)." }),
  status: z.string().nullable().meta({ description: "Its status as the service reports it (`running`, `loading`, `exited`, ...)." }),
  pricePerHour: z.number().nullable().meta({ description: "What it costs, $/hour." }),
  sshHost: z.string().nullable().meta({ description: "The host to reach it over SSH." }),
  sshPort: z.int().nullable().meta({ description: "The port to reach it over SSH." }),
  gpuName: z.string().nullable().meta({ description: "Its GPU model." }),
  numGpus: z.int().nullable().meta({ description: "Its GPU count." }),
  geolocation: z.string().nullable().meta({ description: "Where the machine is." }),
  token: z.string().nullable().meta({ description: "The creation token it carries (`GPU_RENTAL_TOKEN`), when gpu-rental rented it." }),
});
export type InstanceSummary = z.infer<typeof InstanceSummary>;

const PREFIX_RULE = "tokenPrefix is 1 to 20 lowercase letters or digits (the part of a token before its dash)";

const GetInstancesArgs = z.object({
  label: z.string().optional().meta({ description: "Only instances with this label." }),
  tokenPrefix: z.string().regex(/^[a-z0-9]{1,20}$/, PREFIX_RULE).optional().meta({ description: "Only instances whose creation token has this prefix (e.g. `nightly42`)." }),
  status: z.string().min(1).optional().meta({ description: "Only instances with this status (`running`, `loading`, `exited`, ...)." }),
});
type GetInstancesArgs = z.infer<typeof GetInstancesArgs>;

const Result = z.object({
  instances: z.array(InstanceSummary).meta({
    named: { name: "InstanceSummary", description: "An instance of the account, as the service shows it." },
    description: "The instances found, by id.",
  }),
});

export const GET_INSTANCES: LookupFunction<GetInstancesArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getInstances",
    description:
      "The account's instances, by id, narrowed by `label`, by the prefix of the creation token they carry (`tokenPrefix`: a " +
      "run's, or a stack's, as `gpu-rental sweep` takes it) and by `status`; all of them when none is given.",
    args: GetInstancesArgs,
    result: Result,
    example: { args: { label: "trainer", status: "running" }, exports: "instances" },
  }),
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
