import { FastifyInstance } from "fastify";
import { OfferSearchRequest, OfferSearchResponse } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** `POST /api/v0/bundles/`: offer search. */
export function registerOffers(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "POST",
    url: "/api/v0/bundles/",
    permission: "misc",
    rateLimit: "offer_search",
    readOnly: true,
    body: OfferSearchRequest,
    response: OfferSearchResponse,
    handler: ({ body }) => ({ offers: market.searchOffers(body) }),
  });
}
