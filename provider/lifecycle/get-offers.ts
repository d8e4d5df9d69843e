import { z } from "zod";
import { Offer, OfferQuery, offerQuery } from "../../sdk";
import { criteriaFilters, CriteriaFields } from "./criteria";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/**
 * The getOffers function: the offers of the market that match criteria written as an Instance's, in the order an
 * Instance with those criteria would try them (cheapest first unless `order` says otherwise). Read-only.
 */

const LIMIT_RULE = "limit must be a whole number from 1 to 1000";

const GetOffersArgs = z.object({
  ...CriteriaFields,
  limit: z.number().int(LIMIT_RULE).min(1, LIMIT_RULE).max(1000, LIMIT_RULE).optional().meta({ default: 20, description: "At most this many offers (1 to 1000)." }),
});
type GetOffersArgs = z.infer<typeof GetOffersArgs>;

const OfferSummary = z.object({
  id: z.int().meta({ description: "The offer's id: what an Instance's `offerId` rents." }),
  gpuName: z.string().meta({ description: "Its GPU model." }),
  numGpus: z.int().meta({ description: "Its GPU count." }),
  gpuRam: z.number().nullable().meta({ description: "Memory per GPU, MB." }),
  pricePerHour: z.number().meta({ description: "What it costs, $/hour (`dph_total`)." }),
  reliability: z.number().nullable().meta({ description: "The host's reliability, a fraction 0..1." }),
  geolocation: z.string().nullable().meta({ description: "Where the machine is, `City, CC`." }),
  verified: z.boolean().nullable().meta({ description: "Whether the machine is verified." }),
});
export type OfferSummary = z.infer<typeof OfferSummary>;

const GetOffersResult = z.object({
  offers: z.array(OfferSummary).meta({
    named: { name: "Offer", description: "An offer of the market, as the offer search shows it." },
    description: "The offers found, best first.",
  }),
});

export const GET_OFFERS: LookupFunction<GetOffersArgs, z.infer<typeof GetOffersResult>> = {
  description: describeFunction({
    name: "getOffers",
    description:
      "The offers of the market that match criteria written as an Instance's (`gpuModel`, `gpuCount`, `filters`, `order`, " +
      "`offerType`, `maxPricePerHour`), rentable now, in the order an Instance with those criteria tries them (cheapest " +
      "first unless `order` says otherwise): to see what a rental would cost before making it, or to pin one with `offerId`.",
    args: GetOffersArgs,
    result: GetOffersResult,
    example: { args: { gpuModel: "RTX 4090", filters: { reliability: { gte: 0.98 } }, limit: 5 }, exports: "offers[0].id" },
  }),
  args: specOf("getOffers", GetOffersArgs),
  async invoke(args, op) {
    return { offers: (await op.client.offers.search(offerSearchOf(args))).map(summaryOf) };
  },
};

/** The offer search criteria stand for: what an Instance of those criteria searches, `limit` offers at most. */
export function offerSearchOf(args: GetOffersArgs): OfferQuery {
  return offerQuery({
    filters: criteriaFilters(args),
    order: args.order,
    type: args.offerType,
    maxPricePerHour: args.maxPricePerHour,
    candidatesPerSearch: args.limit ?? 20,
  });
}

function summaryOf(offer: Offer): OfferSummary {
  return {
    id: offer.id,
    gpuName: offer.gpu_name,
    numGpus: offer.num_gpus,
    gpuRam: offer.gpu_ram ?? null,
    pricePerHour: offer.dph_total,
    reliability: offer.reliability ?? null,
    geolocation: offer.geolocation ?? null,
    verified: offer.verified ?? null,
  };
}
