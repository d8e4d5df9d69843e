import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getEndpoints function: the account's serverless endpoints (their keys left out). Read-only. */

const GetEndpointsArgs = z.object({});
type GetEndpointsArgs = z.infer<typeof GetEndpointsArgs>;

const EndpointRow = z.object({
  id: z.int().meta({ description: "The endpoint's id." }),
  name: z.string().meta({ description: "Its name, which `route` takes." }),
  state: z.string().meta({ description: "active, suspended or stopped." }),
  coldWorkers: z.int().nullable().meta({ description: "Workers kept loaded." }),
  maxWorkers: z.int().nullable().meta({ description: "The cap on its workers." }),
});

const Result = z.object({
  endpoints: z.array(EndpointRow).meta({
    named: { name: "EndpointRow", description: "An endpoint of the account." },
    description: "The endpoints, in the order the service lists them.",
  }),
});

export const GET_ENDPOINTS: LookupFunction<GetEndpointsArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getEndpoints",
    description: "The account's serverless endpoints: each one's id (what `pulumi import` of an Endpoint takes), name, state and worker counts.",
    args: GetEndpointsArgs,
    result: Result,
    example: { args: {}, exports: "endpoints[0].name" },
  }),
  args: specOf("getEndpoints", GetEndpointsArgs),
  async invoke(_args, op) {
    const endpoints = await op.client.endpoints.list();
    return {
      endpoints: endpoints.map((e) => ({ id: e.id, name: e.endpoint_name, state: e.endpoint_state ?? "active", coldWorkers: e.cold_workers ?? null, maxWorkers: e.max_workers ?? null })),
    };
  },
};
