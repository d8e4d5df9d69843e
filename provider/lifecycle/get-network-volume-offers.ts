import { volumeOffersFunction } from "./volume-offers";

/** The getNetworkVolumeOffers function: the network volume offers that match a search, cheapest storage first. Read-only. */
export const GET_NETWORK_VOLUME_OFFERS = volumeOffersFunction({
  name: "getNetworkVolumeOffers",
  description:
    "The network volume offers that match a search written as a NetworkVolume's `q`, cheapest storage first unless `q` orders " +
    "them otherwise; with `size`, only those with room for it. Network volumes are not generally released: an account without " +
    "them is refused (NetworkVolumesUnavailableError).",
  object: { name: "NetworkVolumeOffer", description: "A network volume offer: space on a cluster's shared disk.", idTakenBy: "a NetworkVolume's `offerId`" },
  search: (client, q) => client.volumes.searchNetworkOffers(q),
});
