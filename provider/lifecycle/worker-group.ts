import { z } from "zod";
import { GpuRentalError, parseSearchParams, rentalWarnings, searchParamsText, unwritableCriteria, WorkerGroup, workerFilters } from "../../sdk";
import { CriteriaFields, criteriaFilters } from "./criteria";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { knownValues, specOf } from "./spec";

/**
 * The WorkerGroup kind: what an endpoint's workers run (a template, by its hash) and where (offer criteria, sent as
 * the CLI's `search_params` text). Everything but the endpoint changes in place; a new template rolls the workers.
 */

const DESCRIPTION =
  "A worker group of a serverless `Endpoint`: the template its workers are created from and the offers they are rented on. The service's " +
  "autoscaler rents, starts, stops and destroys the workers. The template, criteria and worker counts change in place; a new template " +
  "(a Template's new `hashId` after an edit) rolls the workers one at a time, requests still answered. Another endpoint replaces it. " +
  "Destroy deletes it and destroys its workers.";

/** The service's defaults of the inputs that have one (the description says them). */
const DEFAULTS: Readonly<Record<string, number>> = { gpuRam: 24, testWorkers: 3 };

const Spec = z.object({
  endpointId: z.number().int().positive().meta({ replaces: true, description: "The endpoint its workers serve (an Endpoint's `endpointId`)." }),
  templateHash: z.string().min(1).meta({ description: "The template its workers are created from (a Template's `hashId`)." }),
  gpuModel: CriteriaFields.gpuModel,
  gpuCount: CriteriaFields.gpuCount,
  filters: CriteriaFields.filters,
  gpuRam: z.number().min(0).optional().meta({ default: DEFAULTS.gpuRam, description: "The least GPU memory of a worker, GB." }),
  coldWorkers: z.number().int().min(0).optional().meta({ description: "Workers of this group kept loaded (the endpoint's `coldWorkers` when not given)." }),
  testWorkers: z.number().int().min(0).optional().meta({ default: DEFAULTS.testWorkers, description: "Workers made to measure performance while the group starts." }),
  launchArgs: z.string().optional().meta({ description: "Extra arguments of the workers' creation." }),
}).superRefine((spec, ctx) => {
  const why = unwritableCriteria(criteriaFilters(spec));
  if (why) ctx.addIssue({ code: "custom", path: ["filters"], message: why });
});
export type WorkerGroupSpec = z.infer<typeof Spec>;

const WorkerGroupOutputs = z.object({
  workerGroupId: z.int().meta({ description: "The worker group's id (also the resource's id)." }),
  searchParams: z.string().meta({ description: "The criteria as the service keeps them (the CLI's query text)." }),
});
export type WorkerGroupOutputs = z.infer<typeof WorkerGroupOutputs>;

const IN_PLACE = ["templateHash", "gpuModel", "gpuCount", "filters", "gpuRam", "coldWorkers", "testWorkers", "launchArgs"] as const;
const CRITERIA_KEYS = ["gpuModel", "gpuCount", "filters", "gpuRam"];

export const WORKER_GROUP: Kind<WorkerGroupSpec, WorkerGroupOutputs> = {
  description: describeResource({ name: "WorkerGroup", description: DESCRIPTION, inputs: Spec, outputs: WorkerGroupOutputs }),
  spec: specOf("WorkerGroup", Spec),
  diff(olds, news, unknown) {
    // An input not declared is the service's default: declaring that changes nothing.
    const value = (props: Props, key: string) => JSON.stringify(props[key] ?? DEFAULTS[key] ?? null);
    const changed = (key: string) => (unknown !== undefined && news[key] === unknown) || value(olds, key) !== value(news, key);
    const replaces = changed("endpointId") ? ["endpointId"] : [];
    const updates = IN_PLACE.filter(changed);
    return { changes: replaces.length + updates.length > 0, replaces, updates, deleteBeforeReplace: false };
  },
  async create(spec, op) {
    const made = await op.client.workerGroups.create({ endpoint_id: spec.endpointId, ...wireOf(spec) });
    return { id: String(made.id), outs: { ...spec, workerGroupId: made.id, searchParams: made.search_params ?? "" } };
  },
  async adopt(id, spec, op) {
    if (!(await op.client.workerGroups.get(Number(id)))) throw new GpuRentalError(`Worker group ${id} cannot be adopted: the account has no worker group ${id}.`);
    return { id, outs: await declared(Number(id), spec, op) };
  },
  async read(id: string, props: Props, op: Operation) {
    const found = await op.client.workerGroups.get(Number(id));
    return found ? { ...props, ...inputsOf(found, props), workerGroupId: found.id, searchParams: found.search_params ?? "" } : null;
  },
  async import(id: string, op: Operation) {
    const found = await op.client.workerGroups.get(Number(id));
    if (!found) return null;
    const inputs = inputsOf(found, undefined);
    return { inputs, outs: { ...inputs, workerGroupId: found.id, searchParams: found.search_params ?? "" } };
  },
  async update(id, _olds, spec, op) {
    return declared(Number(id), spec, op);
  },
  async delete(id, _props, op) {
    const gone = await op.client.workerGroups.delete(Number(id));
    if (gone?.deleted_workers.length) op.log(`worker group ${id} deleted with its workers (instances ${gone.deleted_workers.join(", ")} destroyed)`);
  },
  /** Criteria that no offer on the market meets now: the autoscaler would rent nothing. */
  async warnings(news, unknown, op) {
    const known = knownValues(news, CRITERIA_KEYS, unknown) as WorkerGroupSpec | undefined;
    if (!known) return [];
    return rentalWarnings(op.client, { filters: filtersOf(known) }, undefined);
  },
};

/** The offer filters the criteria stand for, with the GPU memory. */
function filtersOf(spec: Pick<WorkerGroupSpec, "filters" | "gpuModel" | "gpuCount" | "gpuRam">) {
  return workerFilters(criteriaFilters(spec), spec.gpuRam ?? DEFAULTS.gpuRam as number);
}

function wireOf(spec: WorkerGroupSpec) {
  return {
    template_hash: spec.templateHash,
    search_params: searchParamsText(criteriaFilters(spec)),
    gpu_ram: spec.gpuRam ?? 24,
    ...(spec.coldWorkers !== undefined && { cold_workers: spec.coldWorkers }),
    ...(spec.testWorkers !== undefined && { test_workers: spec.testWorkers }),
    ...(spec.launchArgs !== undefined && { launch_args: spec.launchArgs }),
  };
}

async function declared(id: number, spec: WorkerGroupSpec, op: Operation): Promise<WorkerGroupSpec & WorkerGroupOutputs> {
  if (!(await op.client.workerGroups.update(id, wireOf(spec)))) throw new GpuRentalError(`Worker group ${id} is gone: run \`pulumi refresh\`, then up again to create it anew.`);
  const found = await op.client.workerGroups.get(id);
  return { ...spec, workerGroupId: id, searchParams: found?.search_params ?? "" };
}

/**
 * The inputs declaring a group as the service shows it: its criteria as filters, less what a declared `gpuModel` or
 * `gpuCount` stands for (given back as them); on a read, only the optional inputs the state declared.
 */
function inputsOf(found: WorkerGroup, props: Props | undefined): Record<string, unknown> {
  const filters = (found.search_params ? parseSearchParams(found.search_params) : {}) as Record<string, Record<string, unknown>>;
  const inputs: Record<string, unknown> = { endpointId: found.endpoint_id, templateHash: found.template_hash };
  const sugar: [string, string][] = [["gpuModel", "gpu_name"], ["gpuCount", "num_gpus"]];
  for (const [input, field] of sugar) {
    if (props?.[input] === undefined || filters[field]?.eq === undefined) continue;
    inputs[input] = filters[field].eq;
    const { eq: _eq, ...rest } = filters[field];
    if (Object.keys(rest).length) filters[field] = rest;
    else delete filters[field];
  }
  if (Object.keys(filters).length) inputs.filters = filters;
  const optional: [string, unknown][] = [["gpuRam", found.gpu_ram], ["coldWorkers", found.cold_workers], ["testWorkers", found.test_workers], ["launchArgs", found.launch_args]];
  for (const [key, value] of optional) if (value !== null && value !== undefined && (!props || props[key] !== undefined)) inputs[key] = value;
  return inputs;
}
