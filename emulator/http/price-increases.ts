import { FastifyInstance } from "fastify";
import { PendingPriceIncreasesResponse, PriceIncreaseDecision, PriceIncreaseDecisionResponse } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { priceIncreases } from "../domain/price-increases";
import { route } from "./routes";

/**
 * Pending price increases (`/api/v0/instances/pending-price-increases/`, `accept-price-increase/`,
 * `reject-price-increase/`), as the public client 1.9.1 calls them: a raise is named by its own id in a body of
 * that key alone; a stale one (decided already) is 404 `no_pending_price_increase`.
 */
export function registerPriceIncreases(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/pending-price-increases/",
    permission: "instance_read",
    response: PendingPriceIncreasesResponse,
    handler: ({ principal }) => {
      const rows = priceIncreases.pending(market.instances.list(principal.user.id));
      return { success: true, count: rows.length, truncated: false, pending_price_increases: rows };
    },
  });

  for (const [verb, decision] of [["accept", "accepted"], ["reject", "rejected"]] as const) {
    route(app, market, {
      method: "PUT",
      url: `/api/v0/instances/${verb}-price-increase/`,
      permission: "instance_write",
      refusals: ["not_found"],
      rules: "a raise that is not pending (accepted or rejected already, or another account's): 404 no_pending_price_increase",
      body: PriceIncreaseDecision,
      exactBody: true,
      response: PriceIncreaseDecisionResponse,
      handler: ({ principal, body }) => {
        const id = body.pending_price_increase_id;
        const instance = priceIncreases.decide(market.instances.list(principal.user.id), id, decision, market.clock.now());
        return { success: true, pending_price_increase_id: id, contract_id: instance.id };
      },
    });
  }
}
