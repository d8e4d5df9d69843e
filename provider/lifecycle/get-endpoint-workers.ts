import { z } from "zod";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEndpointWorkers function: an endpoint's workers as the autoscaler sees them. Read-only. */

const GetEndpointWorkersArgs = z.object({ endpointId: z.number().int().positive() });
type GetEndpointWorkersArgs = z.infer<typeof GetEndpointWorkersArgs>;

interface WorkerRow {
  instanceId: number;
  status: string;
  url: string | null;
  load: number;
}

export const GET_ENDPOINT_WORKERS: LookupFunction<GetEndpointWorkersArgs, { workers: WorkerRow[] }> = {
  description: {
    name: "getEndpointWorkers",
    description:
      "An endpoint's workers as the autoscaler sees them now: each one's instance, state (creating, loading, ready, inactive, updating, " +
      "error, destroying), URL while it serves, and load.",
    inputs: { endpointId: { type: "integer", description: "The endpoint (an Endpoint's `endpointId`)." } },
    requiredInputs: ["endpointId"],
    outputs: {
      workers: {
        type: "array",
        items: {
          type: "object",
          object: {
            name: "EndpointWorkerRow",
            description: "A worker of the endpoint.",
            properties: {
              instanceId: { type: "integer", description: "The worker's instance." },
              status: { type: "string", description: "Its state." },
              url: { type: "string", nullable: true, description: "Where it serves, while ready." },
              load: { type: "number", description: "The load it holds." },
            },
            required: ["instanceId", "status", "load"],
          },
        },
        description: "The workers.",
      },
    },
    requiredOutputs: ["workers"],
    example: { args: { endpointId: 1001 }, exports: "workers" },
  },
  args: specOf("getEndpointWorkers", GetEndpointWorkersArgs),
  async invoke(args, op) {
    const workers = await op.client.endpoints.workers(args.endpointId);
    return { workers: workers.map((w) => ({ instanceId: w.id, status: w.status, url: w.url ?? null, load: w.cur_load ?? 0 })) };
  },
};
