import { z } from "zod";
import { GpuRentalClient, VolumeOffer, VolumeQuery } from "../../sdk";
import type { ObjectDescription } from "./description";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** What the functions that search volume offers (network and local) share: arguments, the offer's summary, the search. */

const SIZE_RULE = "size must be a positive number of GB";

const VolumeOffersArgs = z.object({
  q: VolumeQuery.optional(),
  size: z.number().positive(SIZE_RULE).optional(),
});
type VolumeOffersArgs = z.infer<typeof VolumeOffersArgs>;

export interface VolumeOfferSummary {
  id: number;
  diskSpace: number;
  storageCost: number;
  reliability: number;
  geolocation: string;
  verified: boolean;
}

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
  const object: ObjectDescription = {
    name: offers.object.name,
    description: offers.object.description,
    properties: {
      id: { type: "integer", description: `The offer's id (\`ask_contract_id\`)${offers.object.idTakenBy ? `: what ${offers.object.idTakenBy} takes` : ""}.` },
      diskSpace: { type: "number", description: "Free space, GB." },
      storageCost: { type: "number", description: "$/GB/month." },
      reliability: { type: "number", description: "The machine's or cluster's reliability, a fraction 0..1 (`reliability2`)." },
      geolocation: { type: "string", description: "Where it is, `City, CC`." },
      verified: { type: "boolean", description: "Whether it is verified." },
    },
    required: ["id", "diskSpace", "storageCost", "reliability", "geolocation", "verified"],
  };
  return {
    description: {
      name: offers.name,
      description: offers.description,
      inputs: {
        q: {
          type: "map",
          values: { type: "any" },
          tsType: "VolumeQuery",
          description: 'The volume offer search: field filters, `order` and `limit`, e.g. `{ geolocation: { in: ["US", "CA"] }, limit: 5 }`.',
        },
        size: { type: "number", description: "GB wanted: offers with less free space are left out." },
      },
      outputs: { offers: { type: "array", items: { type: "object", object }, description: "The offers found." } },
      requiredOutputs: ["offers"],
      example: { args: { q: { reliability2: { gte: 0.99 } }, size: 50 }, exports: "offers[0].id" },
    },
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
    reliability: offer.reliability2,
    geolocation: offer.geolocation,
    verified: offer.verified,
  };
}
