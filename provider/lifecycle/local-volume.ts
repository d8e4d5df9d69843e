import { volumeKind } from "./volume";

/** The LocalVolume kind: space on one machine's disk, taken from its local volume offer (see ./volume.ts). */
export const LOCAL_VOLUME = volumeKind({
  kind: "local_volume",
  name: "LocalVolume",
  summary:
    "A local volume: space on one machine's disk, kept when the instances that mount it are destroyed (its storage bills until " +
    "the volume is deleted). Only instances of that machine mount it: rent them with `offerId` of an offer of that machine " +
    "(`machineId` is an output), and mount it with the Instance's `volumes`.",
  search: (client, q) => client.volumes.searchLocalOffers(q),
});
