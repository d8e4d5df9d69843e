import { z } from "zod";
import { GpuRentalClient, VolumeOffer, volumeOfferVerified, VolumeQuery } from "../../sdk";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** What the functions that search volume offers (network and local) share: arguments, the offer's summary, the search. */

const SIZE_RULE = "size must be a positive number of GB";

const VolumeOffersArgs = z.object({
  q: VolumeQuery.optional().meta({
    tsType: "VolumeQuery",
    description: 'The volume offer search: field filters, `order` and `limit`, e.g. `{ geolocation: { in: ["US", "CA"] }, limit: 5 }`.',
  }),
  size: z.number().positive(SIZE_RULE).optional().meta({ description: "GB wanted: offers with less free space are left out." }),
});
type VolumeOffersArgs = z.infer<typeof VolumeOffersArgs>;

/** A volume offer as the functions show it; `idTakenBy` names the input that takes its id, when one does. */
function volumeOfferSummary(idTakenBy: string | undefined) {
  return z.object({
    id: z.int().meta({ description: `The offer's id (\`ask_contract_id\`)${idTakenBy ? `: what ${idTakenBy} takes` : ""}.` }),
    diskSpace: z.number().meta({ description: "Free space, GB." }),
    storageCost: z.number().meta({ description: "$/GB/month." }),
    reliability: z.number().nullable().meta({ description: "The machine's or cluster's reliability, a fraction 0..1 (`reliability2`); null when the offer does not say." }),
    geolocation: z.string().nullable().meta({ description: "Where it is, `City, CC`; null when the offer does not say." }),
    verified: z.boolean().nullable().meta({ description: "Whether it is verified; null when the offer does not say." }),
  });
}
export type VolumeOfferSummary = z.infer<ReturnType<typeof volumeOfferSummary>>;

/** One kind of volume offer: its function's name and words, its object type's name, and how it is searched. */
interface VolumeOffers {
  name: string;
  description: string;
  /** The offers' object type; `idTakenBy` names the input that takes an offer's id, when one does. */
  object: { name: string; description: string; idTakenBy?: string };
  search: (client: GpuRentalClient, q: VolumeQuery) => Promise<VolumeOffer[]>;
}

/** A function that searches one kind of volume offer, cheapest storage first unless `q` orders otherwise. */
export function volumeOffersFunction(offers: VolumeOffers): LookupFunction<VolumeOffersArgs, { offers: VolumeOfferSummary[] }> {
  const { name, description, idTakenBy } = offers.object;
  return {
    description: describeFunction({
      name: offers.name,
      description: offers.description,
      args: VolumeOffersArgs,
      result: { offers: z.array(volumeOfferSummary(idTakenBy)).meta({ named: { name, description }, description: "The offers found." }) },
      example: { args: { q: { reliability2: { gte: 0.99 } }, size: 50 }, exports: "offers[0].id" },
    }),
    args: specOf(offers.name, VolumeOffersArgs),
    async invoke(args, op) {
      const q: VolumeQuery = { order: [["storage_cost", "asc"]], ...args.q, ...(args.size !== undefined && { allocated_storage: args.size }) };
      return { offers: (await offers.search(op.client, q)).map(summaryOf) };
    },
  };
}

function summaryOf(offer: VolumeOffer): VolumeOfferSummary {
  return {
    id: offer.ask_contract_id,
    diskSpace: offer.disk_space,
    storageCost: offer.storage_cost,
    reliability: offer.reliability2 ?? null,
    geolocation: offer.geolocation ?? null,
    verified: volumeOfferVerified(offer),
  };
}
