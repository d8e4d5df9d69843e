import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getAuditLogs function: the account's important actions (changes made through the API). Read-only. */

const GetAuditLogsArgs = z.object({
  since: z.number().min(0).optional().meta({ description: "Only actions from then on, seconds since 1970. Default: all the service keeps." }),
  route: z.string().max(200).optional().meta({ description: "Only actions whose endpoint contains this text (`instances`, `PUT /api/v0/users/`). Default: all." }),
});
type GetAuditLogsArgs = z.infer<typeof GetAuditLogsArgs>;

const AuditEntry = z.object({
  time: z.number().meta({ description: "When, seconds since 1970." }),
  route: z.string().meta({ description: "The method and endpoint (`PUT /api/v0/instances/{id}/`)." }),
  ipAddress: z.string().nullable().meta({ description: "Where the call came from." }),
  apiKeyId: z.int().nullable().meta({ description: "The id of the API key that made it." }),
  args: z.string().meta({ description: "What was sent, as the service records it (the emulator: the path's ids and the names of the fields, never their values)." }),
});

const Result = z.object({
  entries: z.array(AuditEntry).meta({ named: { name: "AuditLogEntry", description: "One important action of the account." }, description: "The actions, newest first." }),
});

export const GET_AUDIT_LOGS: LookupFunction<GetAuditLogsArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getAuditLogs",
    description:
      "The account's important actions at the time of the call (what `vastai show audit-logs` lists): each change made through the API, " +
      "newest first, with when, the endpoint, the address and the key that made it; `since` and `route` narrow them.",
    args: GetAuditLogsArgs,
    result: Result,
    example: { args: { route: "instances" }, exports: "entries" },
  }),
  args: specOf("getAuditLogs", GetAuditLogsArgs),
  async invoke(args, op) {
    const rows = await op.client.account.auditLogs();
    const entries = rows.map((row) => ({
      time: typeof row.created_at === "number" ? row.created_at : Date.parse(row.created_at) / 1000,
      route: row.api_route,
      ipAddress: row.ip_address ?? null,
      apiKeyId: row.api_key_id ?? null,
      args: typeof row.args === "string" ? row.args : JSON.stringify(row.args ?? null),
    }));
    return {
      entries: entries
        .filter((e) => (args.since === undefined || e.time >= args.since) && (args.route === undefined || e.route.includes(args.route)))
        .sort((a, b) => b.time - a.time),
    };
  },
};
