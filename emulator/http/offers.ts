import { FastifyInstance } from "fastify";
import { Offer, OFFER_FIELDS, OfferSearchRequest, OfferSearchResponse, orderOf, typedFilters } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { accepting, optionalField } from "./accepting";
import { route } from "./routes";

/** The body of offer search as the service takes it: typed filters of the fields it knows, others ignored. */
export const AcceptedOfferSearch = accepting(OfferSearchRequest, {
  fields: { ...typedFilters(OFFER_FIELDS), order: optionalField(orderOf(OFFER_FIELDS)) },
});

/**
 * The JSON of each offer as bytes, made once: offers do not change while they are listed (a search returns the
 * same objects each time), so an answer is these bytes put together, never serialized again (serializing 64
 * offers of some fifty fields was a fifth of a search's time), nor encoded again (a Buffer goes out as it is).
 */
const offerJson = new WeakMap<Offer, Buffer>();
const OPEN = Buffer.from('{"offers":[');
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]}");

function offersBody(offers: Offer[]): Buffer {
  const parts: Buffer[] = [OPEN];
  offers.forEach((offer, i) => {
    let json = offerJson.get(offer);
    // Without its opening brace: each row starts with its row number in this answer, `rn` (as the live answers show it).
    if (json === undefined) offerJson.set(offer, (json = Buffer.from(JSON.stringify(offer)).subarray(1)));
    if (i > 0) parts.push(COMMA);
    parts.push(Buffer.from(`{"rn":${i + 1},`), json);
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
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
    handler: ({ principal, body }) => offersBody(market.searchOffers(body, principal.key.id)),
  });
}
