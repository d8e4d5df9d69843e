import type { Caller } from "./call";
import { PendingPriceIncrease, PendingPriceIncreasesResponse, PriceIncreaseDecisionResponse } from "./schemas";

/** The raises of the account's contracts that wait for a decision (one row a raise; `contract_id` is the instance). */
async function listPending(client: Caller): Promise<PendingPriceIncrease[]> {
  return (await client.call({ method: "GET", path: "/api/v0/instances/pending-price-increases/", schema: PendingPriceIncreasesResponse })).pending_price_increases;
}

/**
 * Accepts or rejects one raise, by its `pending_price_increase_id`; answers the instance it is for. An accepted
 * rate is billed from the contract's current end date. A raise decided already is a NotFoundError
 * (`no_pending_price_increase`): list them again.
 */
async function decide(client: Caller, id: number, verb: "accept" | "reject"): Promise<{ contractId: number | null }> {
  const body = { pending_price_increase_id: id };
  const answer = await client.call({ method: "PUT", path: `/api/v0/instances/${verb}-price-increase/`, body, schema: PriceIncreaseDecisionResponse, idempotent: true });
  return { contractId: answer.contract_id ?? null };
}

/** `client.priceIncreases`: hosts' raises of running contracts' rates, pending until accepted or rejected. */
export function priceIncreasesApi(client: Caller) {
  return {
    list: () => listPending(client),
    accept: (id: number) => decide(client, id, "accept"),
    reject: (id: number) => decide(client, id, "reject"),
  };
}
