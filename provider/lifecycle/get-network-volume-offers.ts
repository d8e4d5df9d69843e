import { z } from "zod";
import { VolumeOffer, VolumeQuery } from "../../sdk";
import type { ObjectDescription } from "./description";
import type { LookupFunction } from "./registry";
import { specOf } from "./spec";

/** The getNetworkVolumeOffers function: the network volume offers that match a search, cheapest storage first. Read-only. */

const VOLUME_OFFER: ObjectDescription = {
  name: "NetworkVolumeOffer",
  description: "A network volume offer: space on a cluster's shared disk.",
  properties: {
    id: { type: "integer", description: "The offer's id (`ask_contract_id`): what a NetworkVolume's `offerId` takes." },
    diskSpace: { type: "number", description: "Free space, GB." },
    storageCost: { type: "number", description: "$/GB/month." },
    reliability: { type: "number", description: "The cluster's reliability, a fraction 0..1 (`reliability2`)." },
    geolocation: { type: "string", description: "Where it is, `City, CC`." },
    verified: { type: "boolean", description: "Whether it is verified." },
  },
  required: ["id", "diskSpace", "storageCost", "reliability", "geolocation", "verified"],
};

const SIZE_RULE = "size must be a positive number of GB";

const GetNetworkVolumeOffersArgs = z.object({
  q: VolumeQuery.optional(),
  size: z.number().positive(SIZE_RULE).optional(),
});
type GetNetworkVolumeOffersArgs = z.infer<typeof GetNetworkVolumeOffersArgs>;

export interface NetworkVolumeOfferSummary {
  id: number;
  diskSpace: number;
  storageCost: number;
  reliability: number;
  geolocation: string;
  verified: boolean;
}

export const GET_NETWORK_VOLUME_OFFERS: LookupFunction<GetNetworkVolumeOffersArgs, { offers: NetworkVolumeOfferSummary[] }> = {
  description: {
    name: "getNetworkVolumeOffers",
    description:
      "The network volume offers that match a search written as a NetworkVolume's `q`, cheapest storage first unless `q` orders " +
      "them otherwise; with `size`, only those with room for it. Network volumes are not generally released: an account without " +
      "them is refused (NetworkVolumesUnavailableError).",
    inputs: {
      q: {
        type: "map",
        values: { type: "any" },
        tsType: "VolumeQuery",
        description: 'The network volume offer search: field filters, `order` and `limit`, e.g. `{ geolocation: { in: ["US", "CA"] }, limit: 5 }`.',
      },
      size: { type: "number", description: "GB wanted: offers with less free space are left out." },
    },
    outputs: { offers: { type: "array", items: { type: "object", object: VOLUME_OFFER }, description: "The offers found." } },
    requiredOutputs: ["offers"],
    example: { args: { q: { reliability2: { gte: 0.99 } }, size: 50 }, exports: "offers[0].id" },
  },
  args: specOf("getNetworkVolumeOffers", GetNetworkVolumeOffersArgs),
  async invoke(args, op) {
    const q: VolumeQuery = { order: [["storage_cost", "asc"]], ...args.q, ...(args.size !== undefined && { allocated_storage: args.size }) };
    return { offers: (await op.client.volumes.searchNetworkOffers(q)).map(summaryOf) };
  },
};

function summaryOf(offer: VolumeOffer): NetworkVolumeOfferSummary {
  return {
    id: offer.ask_contract_id,
    diskSpace: offer.disk_space,
    storageCost: offer.storage_cost,
    reliability: offer.reliability2,
    geolocation: offer.geolocation,
    verified: offer.verified,
  };
}
