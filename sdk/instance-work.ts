import type { Caller } from "./call";
import { GpuRentalError, NetworkError } from "./errors";
import {
  CancelCopyRequest, CloudConnectionList, CloudCopyRequest, CopyRequest, CopyResponse, DepositResponse, ExecuteRequest, ExecuteResponse,
  InstanceLogsRequest, MessageResponse, PrepayRequest, PrepayResponse, ResultUrlResponse,
} from "./schemas";
import type { CloudConnection, DepositResponse as Deposit, PrepayResponse as Prepaid } from "./schemas";

/** How long a result (logs, a command's output) is waited for once asked, and how often it is looked for. */
const RESULT_WAIT_MS = 30_000;
const RESULT_POLL_MS = 250;

/** A result the service did not make ready in time (logs, a command's output): ask again. */
export class ResultNotReadyError extends GpuRentalError {
  override name = "ResultNotReadyError";
}

/**
 * Fetches a result the service answers by URL (`result_url`): without the key (on the live service it is a file
 * on storage, and the key must not go there), until it is ready (404 until then), for `waitMs` at most.
 */
export async function fetchResult(url: string, waitMs = RESULT_WAIT_MS): Promise<string> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    let status: number;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())) });
      if (response.ok) return await response.text();
      status = response.status;
    } catch (error) {
      if (Date.now() >= deadline) throw new NetworkError(`Could not fetch the result at ${new URL(url).origin}: ${(error as Error).message}`, { cause: error });
      status = 0;
    }
    if (status !== 404 && status !== 403 && status !== 0) throw new GpuRentalError(`The result at ${new URL(url).origin} answered ${status}.`, { status });
    if (Date.now() >= deadline) throw new ResultNotReadyError(`The result was not ready after ${Math.round(waitMs / 1000)} s: ask for it again.`);
    await new Promise((resolve) => setTimeout(resolve, RESULT_POLL_MS));
  }
}

export interface LogsOptions {
  /** The last this many lines. */
  tail?: number;
  /** Only lines containing this text. */
  filter?: string;
  /** The daemon's lines about the instance instead of its container's output. */
  daemon?: boolean;
}

/** `client.instances`' operations on the machine and the deposit (added to instancesApi). */
export function instanceWorkApi(client: Caller) {
  return {
    /** What the instance's container printed (its onstart, its processes), or its daemon's lines; null for an unknown instance. */
    logs: async (id: number, options: LogsOptions = {}): Promise<string> => {
      const body = InstanceLogsRequest.parse({
        ...(options.tail !== undefined && { tail: String(options.tail) }),
        ...(options.filter && { filter: options.filter }),
        ...(options.daemon && { daemon_logs: "true" }),
      });
      const answer = await client.call({ method: "PUT", path: `/api/v0/instances/request_logs/${id}/`, body, schema: ResultUrlResponse, idempotent: true });
      return fetchResult(answer.result_url);
    },
    /**
     * Runs one of the service's allowed commands on the instance (`ls`, `rm`, `du` and plain arguments) and answers
     * its output, without the service's path prefix.
     */
    execute: async (id: number, command: string): Promise<string> => {
      const answer = await client.call({ method: "PUT", path: `/api/v0/instances/command/${id}/`, body: ExecuteRequest.parse({ command }), schema: ExecuteResponse });
      const output = await fetchResult(answer.result_url);
      return answer.writeable_path ? output.split(answer.writeable_path).join("") : output;
    },
    /** Moves `amount` dollars of credit into the instance's deposit; its charges draw on it first, discounted. */
    prepay: (id: number, amount: number): Promise<Prepaid> =>
      client.call({ method: "PUT", path: `/api/v0/instances/prepay/${id}/`, body: PrepayRequest.parse({ amount }), schema: PrepayResponse }),
    /** The instance's deposit: what is left (refundable), the discount so far, the months it covered. */
    deposit: (id: number): Promise<Deposit> => client.call({ method: "GET", path: `/api/v0/instances/balance/${id}/`, schema: DepositResponse }),
  };
}

/** One side of a copy: an instance's folder, or this computer (`local`, copied by the caller over SSH). */
export interface CopySide {
  instanceId?: number;
  path: string;
}

/** `client.copies`: copies between instances, and their cancellation (`/api/v0/commands/copy_direct/`). */
export function copiesApi(client: Caller) {
  return {
    /**
     * Starts copying `from` into `to` (rsync's rule: a path ending in `/` copies its contents). Between two instances
     * the service copies; with this computer on a side (no `instanceId`) it answers where to reach the instance over
     * SSH (`src_addr`/`dst_addr` and port), and the copy is the caller's.
     */
    start: (from: CopySide, to: CopySide) =>
      client.call({
        method: "PUT",
        path: "/api/v0/commands/copy_direct/",
        body: CopyRequest.parse({ client_id: "me", src_id: sideId(from), dst_id: sideId(to), src_path: from.path, dst_path: to.path }),
        schema: CopyResponse,
      }),
    /** Cancels the copies running into the instance. */
    cancel: async (instanceId: number): Promise<void> => {
      await client.call({ method: "DELETE", path: "/api/v0/commands/copy_direct/", body: CancelCopyRequest.parse({ client_id: "me", dst_id: String(instanceId) }), schema: MessageResponse, idempotent: true });
    },
  };
}

/** `client.cloudCopies` and `client.cloudConnections`: copies to and from a cloud connection's storage. */
export function cloudApi(client: Caller) {
  return {
    connections: (): Promise<CloudConnection[]> => client.call({ method: "GET", path: "/api/v0/users/cloud_integrations/", schema: CloudConnectionList }),
    /** Starts a copy between the instance's `instancePath` and the connection's `cloudPath`, in the direction given. */
    start: async (copy: { instanceId: number; connectionId: number; direction: "toCloud" | "fromCloud"; instancePath: string; cloudPath: string; dryRun?: boolean }): Promise<void> => {
      const toCloud = copy.direction === "toCloud";
      const body = CloudCopyRequest.parse({
        instance_id: String(copy.instanceId),
        src: toCloud ? copy.instancePath : copy.cloudPath,
        dst: toCloud ? copy.cloudPath : copy.instancePath,
        selected: String(copy.connectionId),
        transfer: toCloud ? "Instance To Cloud" : "Cloud To Instance",
        flags: copy.dryRun ? ["--dry-run"] : [],
      });
      await client.call({ method: "POST", path: "/api/v0/commands/rclone/", body, schema: MessageResponse });
    },
    /** Cancels the cloud copies running into, or out of, the instance. */
    cancel: async (instanceId: number): Promise<void> => {
      await client.call({ method: "DELETE", path: "/api/v0/commands/rclone/", body: CancelCopyRequest.parse({ client_id: "me", dst_id: instanceId }), schema: MessageResponse, idempotent: true });
    },
  };
}

const sideId = (side: CopySide) => (side.instanceId === undefined ? "local" : String(side.instanceId));
