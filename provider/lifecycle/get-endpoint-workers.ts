import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEndpointWorkers function: an endpoint's workers as the autoscaler sees them. Read-only. */

const GetEndpointWorkersArgs = z.object({ endpointId: z.number().int().positive().meta({ description: "The endpoint (an Endpoint's `endpointId`)." }) });
type GetEndpointWorkersArgs = z.infer<typeof GetEndpointWorkersArgs>;

const WorkerRow = z.object({
  instanceId: z.int().meta({ description: "The worker's instance." }),
  status: z.string().meta({ description: "Its state." }),
  url: z.string().nullable().meta({ description: "Where it serves, while ready." }),
  load: z.number().meta({ description: "The load it holds." }),
});

const Result = z.object({
  workers: z.array(WorkerRow).meta({ named: { name: "EndpointWorkerRow", description: "A worker of the endpoint." }, description: "The workers." }),
});

export const GET_ENDPOINT_WORKERS: LookupFunction<GetEndpointWorkersArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getEndpointWorkers",
    description:
      "An endpoint's workers as the autoscaler sees them now: each one's instance, state (creating, loading, ready, inactive, updating, " +
      "error, destroying), URL while it serves, and load.",
    args: GetEndpointWorkersArgs,
    result: Result,
    example: { args: { endpointId: 1001 }, exports: "workers" },
  }),
  args: specOf("getEndpointWorkers", GetEndpointWorkersArgs),
  async invoke(args, op) {
    const workers = await op.client.endpoints.workers(args.endpointId);
    return { workers: workers.map((w) => ({ instanceId: w.id, status: w.status, url: w.url ?? null, load: w.cur_load ?? 0 })) };
  },
};
