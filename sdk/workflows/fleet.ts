import type { GpuRentalClient } from "../client";
import { GpuRentalError } from "../errors";
import { deletedOrGone } from "../resources/spec";
import { CreateInstanceRequest } from "../schemas";
import { OfferCriteria, RentOptions, RentResult, rentInstance } from "./rent";
import { criteriaUnderCap, oneCappedRentalAtATime } from "./spend";

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
 * reaching for the same offer. With `allOrNothing` (the default) a partial fleet is destroyed before the error
 * is raised, so a failed fleet costs nothing.
 */
export async function rentFleet(
  client: GpuRentalClient,
  size: number,
  criteria: OfferCriteria,
  request: CreateInstanceRequest,
  policy: FleetPolicy = {},
): Promise<FleetResult> {
  const cap = policy.maxHourlySpend;
  if (cap !== undefined) {
    // The whole fleet is checked against the cap at once (each rental at most its share): it fits, or none is rented.
    return oneCappedRentalAtATime(client.apiUrl, async () =>
      rentFleet(client, size, await criteriaUnderCap(client, criteria, cap, size), request, { ...policy, maxHourlySpend: undefined }));
  }
  const outcomes = await Promise.allSettled(Array.from({ length: size }, () => rentInstance(client, criteria, request, policy)));
  const rented = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
  const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [asError(o.reason)] : []));
  if (!failures.length || policy.allOrNothing === false) return { rented, failures };
  const destroyed: number[] = [];
  for (const { instanceId } of rented) {
    await deletedOrGone(() => client.instances.destroy(instanceId));
    destroyed.push(instanceId);
  }
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
