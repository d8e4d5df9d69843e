import { ADOPT_ID, ResourceDescription } from "./description";

export const NETWORK_VOLUME: ResourceDescription = {
  name: "NetworkVolume",
  description:
    "A network volume. Network volumes are not generally released on the service (its own client hides them as not yet released): " +
    "an account without the feature is refused, reported as NetworkVolumesUnavailableError before anything is made. " +
    "The API shows no way to resize or rename one, so every change makes a new volume (before the old one is " +
    "deleted). A volume still attached to an instance is not deleted: destroy the instance first.",
  inputs: {
    offerId: { type: "integer", description: "Take the space from exactly this network volume offer (`ask_contract_id`)." },
    q: {
      type: "map",
      values: { type: "any" },
      tsType: "VolumeQuery",
      description:
        "Otherwise the cheapest offer (by `storage_cost`) with room for `size` matching this network volume offer search, e.g. " +
        '`{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`.',
    },
    size: { type: "number", description: "GB." },
    name: { type: "string", description: "The volume's name." },
    adoptId: ADOPT_ID,
  },
  requiredInputs: ["size"],
  outputs: {
    volumeId: { type: "integer", description: "The volume's id (also the resource's id)." },
    askContractId: { type: "integer", nullable: true, description: "The network volume offer the space was taken from." },
    diskSpace: { type: "number", nullable: true, description: "Its size in GB." },
    volumeName: { type: "string", nullable: true, description: "The name the service gave the volume." },
    geolocation: { type: "string", nullable: true, description: "Where it is." },
    status: { type: "string", nullable: true, description: "Its status as the service reports it." },
    storageCost: { type: "number", nullable: true, description: "$/GB/month." },
    storageCostTotal: { type: "number", nullable: true, description: "$/hour for the whole volume." },
    instances: { type: "array", items: { type: "integer" }, description: "The instances it is attached to." },
  },
  requiredOutputs: ["volumeId", "instances"],
};
