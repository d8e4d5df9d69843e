import { volumeKind } from "./volume";

/** The NetworkVolume kind: a network volume taken from a network volume offer (see ./volume.ts). */
export const NETWORK_VOLUME = volumeKind({
  kind: "network_volume",
  name: "NetworkVolume",
  summary:
    "A network volume. Network volumes are not generally released on the service (its own client hides them as not yet released): " +
    "an account without the feature is refused, reported as NetworkVolumesUnavailableError before anything is made.",
  search: (client, q) => client.volumes.searchNetworkOffers(q),
});
