import { z } from "zod";
import { CreateEndpointRequest, Endpoint, ENDPOINT_DEFAULTS, ENDPOINT_STATES, GpuRentalError } from "../../sdk";
import { describeResource } from "./describe";
import type { NamedType } from "./description";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";

/**
 * The Endpoint kind: a serverless endpoint (`/api/v0/endptjobs/`), its scaling targets, all changed in place. The
 * service's autoscaler rents its workers (WorkerGroup says what they run); destroying it destroys them.
 */

/** Each target: its input, its wire field (whose rules it takes: sdk/schemas/serverless.ts), its description. */
export const ENDPOINT_TARGETS = {
  minLoad: ["min_load", "The floor of active capacity, in the endpoint's load units per second. Default 0."],
  minColdLoad: ["min_cold_load", "The floor of total (active and inactive) capacity. Default 0."],
  targetUtil: ["target_util", "The share of active capacity load should use, in (0, 1]: 0.9 leaves 11% headroom. Default 0.9."],
  coldMult: ["cold_mult", "Total capacity as a multiple of active load (workers kept loaded but inactive). Default 2.5."],
  coldWorkers: ["cold_workers", "Workers kept with the model loaded, active or inactive (0 lets the endpoint scale to zero). Default 5."],
  maxWorkers: ["max_workers", "The cap on all workers, at least `coldWorkers`. Default 20."],
  maxQueueTime: ["max_queue_time", "Seconds a request may wait at one worker before the router passes it over. Default 30."],
  targetQueueTime: ["target_queue_time", "Seconds of endpoint-wide queueing above which the autoscaler scales up hard. Default 10."],
  inactivityTimeout: ["inactivity_timeout", "Seconds without requests before the endpoint may scale down (to zero where the targets allow); negative: never."],
} as const satisfies Record<string, [keyof CreateEndpointRequest, string]>;
type Target = keyof typeof ENDPOINT_TARGETS;
const TARGET_NAMES = Object.keys(ENDPOINT_TARGETS) as Target[];

const STATE: NamedType = {
  name: "EndpointState",
  description: "Whether the autoscaler manages the endpoint's workers.",
  values: {
    active: "Managed: workers come and go with the load.",
    suspended: "Not managed: workers keep their state.",
    stopped: "Not managed: every worker inactive (storage billed only).",
  },
};

const DESCRIPTION =
  "A serverless endpoint: the scaling targets the service's autoscaler keeps its workers to (a `WorkerGroup` says what a worker runs and where). " +
  "Requests reach a ready worker through the route (the SDK's `route`). Every target and the state change in place; the name too. " +
  "Declaring a name the account has already takes that endpoint over. Destroy deletes it with its worker groups, and destroys their workers.";

/** The inputs' rules: each target's as the service's, and `maxWorkers` at least `coldWorkers`. */
const Spec = z
  .object({
    name: z.string().min(1).max(128).meta({ description: "The endpoint's name, which `route` takes." }),
    ...(Object.fromEntries(TARGET_NAMES.map((key) => [key, CreateEndpointRequest.shape[ENDPOINT_TARGETS[key][0]].meta({ description: ENDPOINT_TARGETS[key][1] })])) as Record<
      Target,
      z.ZodOptional<z.ZodNumber>
    >),
    state: z.enum(ENDPOINT_STATES).optional().meta({ named: STATE, default: "active", description: "Whether the autoscaler manages its workers." }),
  })
  .refine((s) => s.maxWorkers === undefined || s.maxWorkers >= (s.coldWorkers ?? ENDPOINT_DEFAULTS.cold_workers), {
    path: ["maxWorkers"],
    message: "maxWorkers is below coldWorkers (5 when not declared): the autoscaler could not keep that many workers loaded. Raise maxWorkers or lower coldWorkers.",
  });
export type EndpointSpec = z.infer<typeof Spec>;

const EndpointOutputs = z.object({
  endpointId: z.int().meta({ description: "The endpoint's id (also the resource's id)." }),
  apiKey: z.string().meta({ secret: true, description: "The endpoint's own key, which `/route/` takes (a secret output)." }),
});
export type EndpointOutputs = z.infer<typeof EndpointOutputs>;

export const ENDPOINT: Kind<EndpointSpec, EndpointOutputs> = {
  description: describeResource({ name: "Endpoint", description: DESCRIPTION, inputs: Spec, outputs: EndpointOutputs }),
  spec: specOf("Endpoint", Spec),
  diff(olds, news, unknown) {
    // A state not declared is `active`, the service's: declaring it so changes nothing.
    const value = (props: Props, key: string) => props[key] ?? (key === "state" ? "active" : null);
    const updates = (["name", "state", ...TARGET_NAMES] as const).filter((key) => (unknown !== undefined && news[key] === unknown) || value(olds, key) !== value(news, key));
    return { changes: updates.length > 0, replaces: [], updates, deleteBeforeReplace: false };
  },
  async create(spec, op) {
    const existing = (await op.client.endpoints.list()).find((e) => e.endpoint_name === spec.name);
    if (existing) {
      op.log(`the account has an endpoint ${spec.name} already (endpoint ${existing.id}): taken over, its targets set (destroy deletes it)`);
      return { id: String(existing.id), outs: await declared(existing.id, spec, op) };
    }
    const made = await op.client.endpoints.create(wireOf(spec));
    if (spec.state && spec.state !== "active") await op.client.endpoints.update(made.id, { endpoint_state: spec.state });
    return { id: String(made.id), outs: { ...spec, endpointId: made.id, apiKey: made.api_key ?? "" } };
  },
  async adopt(id, spec, op) {
    if (!(await op.client.endpoints.get(Number(id)))) throw new GpuRentalError(`Endpoint ${id} cannot be adopted: the account has no endpoint ${id}.`);
    return { id, outs: await declared(Number(id), spec, op) };
  },
  async read(id: string, props: Props, op: Operation) {
    const found = await op.client.endpoints.get(Number(id));
    return found ? { ...props, ...inputsOf(found, props), endpointId: found.id, apiKey: found.api_key ?? props.apiKey ?? "" } : null;
  },
  async import(id: string, op: Operation) {
    const found = await op.client.endpoints.get(Number(id));
    if (!found) return null;
    const inputs = inputsOf(found, undefined);
    return { inputs, outs: { ...inputs, endpointId: found.id, apiKey: found.api_key ?? "" } };
  },
  async update(id, _olds, spec, op) {
    return declared(Number(id), spec, op);
  },
  async delete(id, _props, op) {
    const gone = await op.client.endpoints.delete(Number(id));
    if (gone?.deleted_workers.length) op.log(`endpoint ${id} deleted with its workers (instances ${gone.deleted_workers.join(", ")} destroyed)`);
  },
};

/** The spec as the service's fields. */
function wireOf(spec: EndpointSpec): CreateEndpointRequest {
  const wire: Record<string, unknown> = { endpoint_name: spec.name };
  for (const key of TARGET_NAMES) if (spec[key] !== undefined) wire[ENDPOINT_TARGETS[key][0]] = spec[key];
  return wire as CreateEndpointRequest;
}

/**
 * The endpoint `id` set to the spec in place (a target no longer declared goes back to the service's default; an
 * inactivity timeout no longer declared stays, as the service takes no "unset"); its outputs.
 */
async function declared(id: number, spec: EndpointSpec, op: Operation): Promise<EndpointSpec & EndpointOutputs> {
  const changed = await op.client.endpoints.update(id, { ...ENDPOINT_DEFAULTS, ...wireOf(spec), endpoint_state: spec.state ?? "active" });
  const found = changed && (await op.client.endpoints.get(id));
  if (!found) throw new GpuRentalError(`Endpoint ${id} is gone: run \`pulumi refresh\`, then up again to create it anew.`);
  return { ...spec, endpointId: id, apiKey: found.api_key ?? "" };
}

/**
 * The inputs that declare an endpoint as the service shows it: on a read, only the targets the state declared (a
 * service default is not a declared input); on an import, every target.
 */
function inputsOf(found: Endpoint, props: Props | undefined): Record<string, unknown> {
  const inputs: Record<string, unknown> = { name: found.endpoint_name };
  for (const key of TARGET_NAMES) {
    const value = found[ENDPOINT_TARGETS[key][0]];
    if (value !== null && value !== undefined && (!props || props[key] !== undefined)) inputs[key] = value;
  }
  if (found.endpoint_state && (!props || props.state !== undefined)) inputs.state = found.endpoint_state;
  return inputs;
}
