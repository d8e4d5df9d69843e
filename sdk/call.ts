import type { z } from "zod";
import type { Patience } from "./pacing";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

/** One request of the API, and the wire schema its answer must match. */
export interface Call<S extends z.ZodType> {
  method: Method;
  path: string;
  schema: S;
  body?: unknown;
  /**
   * Whether a request that may have reached the service can be sent again safely. Instance creation is not:
   * after a 5xx or a reset its outcome is unknown, so only refusals that prove nothing happened are retried.
   */
  idempotent?: boolean;
  /** Sent to the service's autoscaler (its own host on the live service: the client's `autoscalerUrl`), not its API. */
  autoscaler?: boolean;
}

/**
 * What the endpoint modules (templates.ts, volumes.ts, ...) need of the client: sending one call. They build the
 * client's namespaces from it, so they never import the client (no import circle).
 */
export interface Caller {
  /** `patience`: how long the call may wait for the service's rate limit (a rental's deadline), and who is told. */
  call<S extends z.ZodType>(call: Call<S>, patience?: Patience): Promise<z.infer<S>>;
}
