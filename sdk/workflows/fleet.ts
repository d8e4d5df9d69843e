import { GpuRentalClient } from "../client";
import { GpuRentalError } from "../errors";
import { CreateInstanceRequest } from "../schemas";
import { OfferCriteria, RentOptions, RentResult, rentInstance } from "./rent";
import { criteriaUnderCap } from "./spend";
import { destroyRetried } from "./destroy";

export interface FleetPolicy extends RentOptions {
  /** A fleet that cannot be rented whole is destroyed again (default); otherwise what was rented is returned. */
  allOrNothing?: boolean;
  /** The creation token of member `i` (a Pulumi fleet's, derived from its URN); default a fresh one per attempt. */
  tokenOf?: (index: number) => string | undefined;
}

export interface FleetResult {
  rented: RentResult[];
  /** The rentals that failed (only without `allOrNothing`). */
  failures: GpuRentalError[];
  /** Each member's rental or failure, in member order (only without `allOrNothing`, where some may fail). */
  members: (RentResult | GpuRentalError)[];
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
 * Rents `size` instances of the same criteria at once. The rentals run together in this process, drawing from
 * shared searches (as every rental of these criteria does), without ever reaching for the same offer. `request` is
 * the creation request of every member, or of member `i` (a label of its own). With `allOrNothing` (the default) a
 * partial fleet is destroyed before the error is raised, so a failed fleet costs nothing.
 */
export async function rentFleet(
  client: GpuRentalClient,
  size: number,
  criteria: OfferCriteria,
  request: CreateInstanceRequest | ((index: number) => CreateInstanceRequest),
  policy: FleetPolicy = {},
): Promise<FleetResult> {
  const cap = policy.maxHourlySpend;
  if (cap !== undefined) {
    // The whole fleet is checked against the cap at once (each rental at most its share): it fits, or none is rented.
    return GpuRentalClient.rentalsOf(client).oneCappedRentalAtATime(client.apiUrl, async () =>
      rentFleet(client, size, await criteriaUnderCap(client, criteria, cap, size), request, { ...policy, maxHourlySpend: undefined }));
  }
  const requestOf = typeof request === "function" ? request : () => request;
  const { tokenOf, ...rest } = policy;
  // The members start together: they draw from the same searches (offer-pool.ts), sized for all of them.
  const outcomes = await Promise.allSettled(Array.from({ length: size }, (_, i) => rentInstance(client, criteria, requestOf(i), { ...rest, token: tokenOf?.(i) ?? rest.token })));
  const members = outcomes.map((o) => (o.status === "fulfilled" ? o.value : asError(o.reason)));
  const rented = members.filter((m): m is RentResult => !(m instanceof GpuRentalError));
  const failures = members.filter((m): m is GpuRentalError => m instanceof GpuRentalError);
  if (!failures.length || policy.allOrNothing === false) return { rented, failures, members };
  const destroyed = rented.map((r) => r.instanceId);
  await destroyRetried(client, destroyed, policy);
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
