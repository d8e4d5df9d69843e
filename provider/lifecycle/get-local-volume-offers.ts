import { volumeOffersFunction } from "./volume-offers";

/** The getLocalVolumeOffers function: the local volume offers (one per machine) that match a search. Read-only. */
export const GET_LOCAL_VOLUME_OFFERS = volumeOffersFunction({
  name: "getLocalVolumeOffers",
  description:
    "The local volume offers that match a search (one per machine on the market: a local volume lives on its machine's disk, " +
    "for the instances of that machine), cheapest storage first unless `q` orders them otherwise; with `size`, only those with " +
    "room for it.",
  object: { name: "LocalVolumeOffer", description: "A local volume offer: space on one machine's disk." },
  search: (client, q) => client.volumes.searchLocalOffers(q),
});
