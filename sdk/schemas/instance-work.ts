import { z } from "zod";

/**
 * The service's operations on an instance's machine and its deposit (docs/service-facts.md#instance-logs-and-commands,
 * #copies, #prepaid-deposits): requests as the vendor's description names their fields, answers as it shows them.
 */

/** `PUT /api/v0/instances/request_logs/{id}/`. `tail` is text in the description (a number of lines). */
export const InstanceLogsRequest = z.object({
  tail: z.union([z.string().regex(/^\d{1,9}$/), z.number().int().nonnegative()]).optional().describe("The last this many lines."),
  filter: z.string().max(512).optional().describe("Only lines containing this text."),
  daemon_logs: z.union([z.literal("true"), z.boolean()]).optional().describe('"true": the daemon\'s lines about the instance instead of its container\'s output.'),
});
export type InstanceLogsRequest = z.infer<typeof InstanceLogsRequest>;

/** An answer whose text is fetched from `result_url` (without a key) once ready: 404 until then. */
export const ResultUrlResponse = z.looseObject({
  success: z.boolean(),
  result_url: z.string(),
  msg: z.string().optional(),
});

/** `PUT /api/v0/instances/command/{id}/`. */
export const ExecuteRequest = z.object({ command: z.string().min(1).max(512).describe("One of the allowed commands (ls, rm, du) and its arguments.") });
export const ExecuteResponse = ResultUrlResponse.extend({
  /** A prefix the output may carry that is not the machine's (the CLI removes it). */
  writeable_path: z.string().optional(),
});

/** An instance's id as the copy calls name one: a number, its text, or `C.<id>`. */
const InstanceRef = z.union([z.string().regex(/^\s*(C\.)?\d{1,15}\s*$/, "an instance id (123 or C.123)"), z.number().int().positive().max(1e15)]);

/** An instance id as copies take it: a number, its text, or `C.<id>`; `local` for this computer. */
const CopyPlace = z.union([z.string().max(100), z.number().int()]).nullable();

/** `PUT /api/v0/commands/copy_direct/`. */
export const CopyRequest = z.object({
  client_id: z.string().optional(),
  src_id: CopyPlace.optional(),
  dst_id: CopyPlace.optional(),
  src_path: z.string().min(1).max(4096),
  dst_path: z.string().min(1).max(4096),
});
export type CopyRequest = z.infer<typeof CopyRequest>;
export const CopyResponse = z.looseObject({
  success: z.boolean(),
  msg: z.string().optional(),
  /** With this computer on one side: where to reach the instance's side over SSH. */
  src_addr: z.string().optional(),
  src_port: z.number().int().optional(),
  dst_addr: z.string().optional(),
  dst_port: z.number().int().optional(),
});

/** `DELETE /api/v0/commands/copy_direct/` and `DELETE /api/v0/commands/rclone/`: the instance the copies go into. */
export const CancelCopyRequest = z.object({ client_id: z.string().optional(), dst_id: InstanceRef });

/** `POST /api/v0/commands/rclone/`: a cloud copy, `transfer` "Instance To Cloud" or "Cloud To Instance". */
export const CloudCopyRequest = z.object({
  instance_id: InstanceRef,
  src: z.string().min(1).max(4096),
  dst: z.string().min(1).max(4096),
  selected: z.union([z.string().max(100), z.number().int()]).describe("The cloud connection's id."),
  transfer: z.string().max(100),
  flags: z.array(z.string().max(100)).max(20).optional(),
  api_key: z.string().optional(),
});
export type CloudCopyRequest = z.infer<typeof CloudCopyRequest>;
export const MessageResponse = z.looseObject({ success: z.boolean(), msg: z.string().optional() });

/** A row of `GET /api/v0/users/cloud_integrations/` (a bare list). */
export const CloudConnection = z.looseObject({ id: z.number().int(), cloud_type: z.string(), name: z.string() });
export type CloudConnection = z.infer<typeof CloudConnection>;
export const CloudConnectionList = z.array(CloudConnection);

/** `PUT /api/v0/instances/prepay/{id}/`. */
export const PrepayRequest = z.object({ amount: z.number().positive().describe("Dollars of credit moved into the instance's deposit.") });
export const PrepayResponse = z.looseObject({
  success: z.boolean(),
  /** Months of the instance's rate the deposit covers. */
  timescale: z.number(),
  discount_rate: z.number(),
});
export type PrepayResponse = z.infer<typeof PrepayResponse>;

/** `GET /api/v0/instances/balance/{id}/`. */
export const DepositResponse = z.looseObject({
  success: z.boolean().optional(),
  refundable_deposit: z.number(),
  total_discount: z.number(),
  discount_months: z.number(),
});
export type DepositResponse = z.infer<typeof DepositResponse>;
