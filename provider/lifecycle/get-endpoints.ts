import { z } from "zod";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEndpoints function: the account's serverless endpoints (their keys left out). Read-only. */

const GetEndpointsArgs = z.object({});
type GetEndpointsArgs = z.infer<typeof GetEndpointsArgs>;

interface EndpointRow {
  id: number;
  name: string;
  state: string;
  coldWorkers: number | null;
  maxWorkers: number | null;
}

export const GET_ENDPOINTS: LookupFunction<GetEndpointsArgs, { endpoints: EndpointRow[] }> = {
  description: {
    name: "getEndpoints",
    description: "The account's serverless endpoints: each one's id (what `pulumi import` of an Endpoint takes), name, state and worker counts.",
    inputs: {},
    outputs: {
      endpoints: {
        type: "array",
        items: {
          type: "object",
          object: {
            name: "EndpointRow",
            description: "An endpoint of the account.",
            properties: {
              id: { type: "integer", description: "The endpoint's id." },
              name: { type: "string", description: "Its name, which `route` takes." },
              state: { type: "string", description: "active, suspended or stopped." },
              coldWorkers: { type: "integer", nullable: true, description: "Workers kept loaded." },
              maxWorkers: { type: "integer", nullable: true, description: "The cap on its workers." },
            },
            required: ["id", "name", "state"],
          },
        },
        description: "The endpoints, in the order the service lists them.",
      },
    },
    requiredOutputs: ["endpoints"],
    example: { args: {}, exports: "endpoints[0].name" },
  },
  args: specOf("getEndpoints", GetEndpointsArgs),
  async invoke(_args, op) {
    const endpoints = await op.client.endpoints.list();
    return {
      endpoints: endpoints.map((e) => ({ id: e.id, name: e.endpoint_name, state: e.endpoint_state ?? "active", coldWorkers: e.cold_workers ?? null, maxWorkers: e.max_workers ?? null })),
    };
  },
};
