/**
 * Offers that rentals in this process are accepting right now, or took (rented, or found gone) lately, per
 * service (offer ids are the service's own). Rentals running at once in one process (the resources of one
 * Pulumi program, a fleet) skip these instead of racing for the cheapest offers: a search result is a snapshot,
 * and an offer another rental of this process took after that search is still on its list.
 */
interface ServiceClaims {
  accepting: Set<number>;
  /** Offer id → when it was last taken. */
  taken: Map<number, number>;
}

/** Longer than any rental goes on with one search's candidates. */
const TAKEN_MEMORY_MS = 10 * 60_000;
const services = new Map<string, ServiceClaims>();

function of(service: string): ServiceClaims {
  let claims = services.get(service);
  if (!claims) services.set(service, (claims = { accepting: new Set(), taken: new Map() }));
  const now = Date.now();
  for (const [id, at] of claims.taken) if (now - at > TAKEN_MEMORY_MS) claims.taken.delete(id);
  return claims;
}

/**
 * Claims an offer found by a search made at `searchedAt`; false when another rental of this process is
 * accepting it, or took it since that search (an offer taken before it, and listed again, was given back).
 */
export function claimOffer(service: string, id: number, searchedAt: number): boolean {
  const claims = of(service);
  if (claims.accepting.has(id) || (claims.taken.get(id) ?? -Infinity) >= searchedAt) return false;
  claims.accepting.add(id);
  return true;
}

/** Gives a claim up; `taken` when the offer was rented or found gone. */
export function releaseOffer(service: string, id: number, taken: boolean): void {
  const claims = of(service);
  claims.accepting.delete(id);
  if (taken) claims.taken.set(id, Date.now());
}

/** The offers of a service being accepted by rentals of this process now: to leave out of searches. */
export function acceptingOffers(service: string): number[] {
  return [...of(service).accepting];
}
