import type { GpuRentalClient } from "../client";
import { GpuRentalError } from "../errors";
import { deletedOrGone } from "../resources/spec";
import { CreateInstanceRequest } from "../schemas";
import { OfferCriteria, RentOptions, RentResult, rentInstance } from "./rent";

export interface FleetPolicy extends RentOptions {
  /** A fleet that cannot be rented whole is destroyed again (default); otherwise what was rented is returned. */
  allOrNothing?: boolean;
}

export interface FleetResult {
  rented: RentResult[];
  /** The rentals that failed (only without `allOrNothing`). */
  failures: GpuRentalError[];
}

/** A fleet that could not be rented whole: what failed, and what was destroyed again. */
export class FleetRentError extends GpuRentalError {
  override name = "FleetRentError";
  constructor(
    message: string,
    readonly failures: GpuRentalError[],
    readonly destroyed: number[],
  ) {
    super(message);
  }
}

/**
 * Rents `size` instances of the same criteria at once. The rentals run together in this process without ever
 * reaching for the same offer. `request` is the creation request of every member, or of member `i` (a label
 * of its own). With `allOrNothing` (the default) a partial fleet is destroyed before the error is raised, so a
 * failed fleet costs nothing.
 */
export async function rentFleet(
  client: GpuRentalClient,
  size: number,
  criteria: OfferCriteria,
  request: CreateInstanceRequest | ((index: number) => CreateInstanceRequest),
  policy: FleetPolicy = {},
): Promise<FleetResult> {
  const requestOf = typeof request === "function" ? request : () => request;
  const outcomes = await Promise.allSettled(Array.from({ length: size }, (_, i) => rentInstance(client, criteria, requestOf(i), policy)));
  const rented = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
  const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [asError(o.reason)] : []));
  if (!failures.length || policy.allOrNothing === false) return { rented, failures };
  const destroyed = rented.map((r) => r.instanceId);
  await Promise.all(destroyed.map((id) => deletedOrGone(() => client.instances.destroy(id))));
  throw new FleetRentError(
    `Could not rent a fleet of ${size}: ${failures.length} rental(s) failed (${failures[0].message}). ` +
      `The ${rented.length} instance(s) rented were destroyed again${destroyed.length ? ` (${destroyed.join(", ")})` : ""}.`,
    failures,
    destroyed,
  );
}

function asError(reason: unknown): GpuRentalError {
  return reason instanceof GpuRentalError ? reason : new GpuRentalError(String((reason as Error)?.message ?? reason));
}
