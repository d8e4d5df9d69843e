/**
 * Offers that a rental in this process is accepting right now, per service (offer ids are the service's own).
 * Rentals running at once in one process (the resources of one Pulumi program, a fleet) skip each other's offers
 * instead of racing for the cheapest ones.
 */
const claimed = new Map<string, Set<number>>();

function of(service: string): Set<number> {
  let set = claimed.get(service);
  if (!set) claimed.set(service, (set = new Set()));
  return set;
}

/** Claims an offer of a service; false when another rental of this process has it. */
export function claimOffer(service: string, id: number): boolean {
  const set = of(service);
  if (set.has(id)) return false;
  set.add(id);
  return true;
}

export function releaseOffer(service: string, id: number): void {
  of(service).delete(id);
}

/** The offers of a service claimed now, to leave out of searches. */
export function claimedOffers(service: string): number[] {
  return [...of(service)];
}
