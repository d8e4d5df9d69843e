import { GpuRentalClient } from "../client";
import { noMatchText, OfferCriteria, searchText, WIDEN_CRITERIA } from "./criteria";
import { capWarnings } from "./spend";

/**
 * For `pulumi preview`: what `up` will meet renting `count` instances of `criteria` with the stack's `cap` (none:
 * no cap), as warnings. Too few offers on the market now match (the rental would find nothing to rent: a misspelt
 * GPU model, criteria no machine meets), else the cap's refusal (capWarnings). The search is the one the rentals of
 * these criteria share (offer-pool.ts): the previews of many like resources make one, and their rentals draw from it.
 */
export async function rentalWarnings(client: GpuRentalClient, criteria: OfferCriteria, cap: number | undefined, count = 1): Promise<string[]> {
  if (count < 1) return [];
  const found = await GpuRentalClient.rentalsOf(client).offerPool(client.apiUrl, criteria).available(client, count);
  if (found >= count) return capWarnings(client, criteria, cap, count);
  const now = "on the market now";
  if (count === 1) return [`${noMatchText(criteria)} ${now}: \`pulumi up\` will find nothing to rent. ${WIDEN_CRITERIA}`];
  return [
    `Only ${found} offer(s) match ${searchText(criteria)} ${now}, for ${count} instances: ` +
      `\`pulumi up\` will fail (a fleet is rented whole or not at all). ${WIDEN_CRITERIA}`,
  ];
}
