import { FastifyInstance } from "fastify";
import { Offer, OfferSearchRequest, OfferSearchResponse, orderOf, typedFilters } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { OFFER_FIELDS } from "../domain/offers";
import { accepting, optionalField } from "./accepting";
import { route } from "./routes";

/** The body of offer search as the service takes it: typed filters of the fields it knows, others ignored. */
export const AcceptedOfferSearch = accepting(OfferSearchRequest, {
  fields: { ...typedFilters(OFFER_FIELDS), order: optionalField(orderOf(OFFER_FIELDS)) },
});

/**
 * The JSON text of each offer, made once: offers do not change while they are listed (a search returns the same
 * objects each time), and serializing 64 offers of some fifty fields was a fifth of a search's time.
 */
const offerJson = new WeakMap<Offer, string>();

function offersBody(offers: Offer[]): string {
  const parts = offers.map((offer) => {
    let json = offerJson.get(offer);
    if (json === undefined) offerJson.set(offer, (json = JSON.stringify(offer)));
    return json;
  });
  return `{"offers":[${parts.join(",")}]}`;
}

/** `POST /api/v0/bundles/`: offer search. */
export function registerOffers(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "POST",
    url: "/api/v0/bundles/",
    permission: "misc",
    rateLimit: "offer_search",
    readOnly: true,
    body: AcceptedOfferSearch,
    response: OfferSearchResponse,
    handler: ({ body }) => offersBody(market.searchOffers(body)),
  });
}
