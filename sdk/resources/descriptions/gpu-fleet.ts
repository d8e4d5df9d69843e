import type { ObjectDescription, ResourceDescription } from "./description";
import { INSTANCE } from "./instance";

/** Inputs that name one instance: a fleet has its own (member labels by `labelPrefix`, adoption by `adoptIds`). */
const ONE_INSTANCE_ONLY = new Set(["offerId", "label", "adoptId"]);

const SSH_ENDPOINT: ObjectDescription = {
  name: "SshEndpoint",
  description: "Where a member is reached over SSH.",
  properties: {
    instanceId: { type: "integer", description: "The member's instance id." },
    host: { type: "string", nullable: true, description: "The host to reach it over SSH." },
    port: { type: "integer", nullable: true, description: "The port to reach it over SSH." },
  },
  required: ["instanceId"],
};

const MEMBER: ObjectDescription = {
  name: "FleetMember",
  description: "A member of a fleet as the service last showed it.",
  properties: {
    index: { type: "integer", description: "Its place in the fleet (0-based)." },
    instanceId: { type: "integer", description: "Its instance id." },
    label: { type: "string", description: "Its label, `<labelPrefix>-<index>`." },
    status: { type: "string", nullable: true, description: "The instance's status; `gone` once it no longer exists (seen by refresh)." },
    sshHost: { type: "string", nullable: true, description: "The host to reach it over SSH." },
    sshPort: { type: "integer", nullable: true, description: "The port to reach it over SSH." },
    rentedOfferId: { type: "integer", nullable: true, description: "The offer rented; null for an adopted member." },
    rentedOffer: { type: "map", values: { type: "any" }, nullable: true, description: "The offer as it was when rented." },
    machineId: { type: "integer", nullable: true, description: "The machine it runs on." },
    gpuName: { type: "string", nullable: true, description: "The GPU model." },
    numGpus: { type: "integer", nullable: true, description: "GPUs on the instance." },
    pricePerHour: { type: "number", nullable: true, description: "What it costs, $/hour." },
    geolocation: { type: "string", nullable: true, description: "Where the machine is." },
  },
  required: ["index", "instanceId", "label"],
};

/** `size` instances of one spec as one resource (sdk/resources/fleet.ts). */
export const GPU_FLEET: ResourceDescription = {
  name: "GpuFleet",
  description:
    "`size` instances of one spec held as one resource: one engine operation however large, so the fleet boots at the speed of " +
    "one boot. Members are rented together (all or nothing, no two reaching for one offer) and waited for together. Resizing " +
    "adds members at the end or removes the last ones; a member that failed to boot, was outbid or was destroyed out of band " +
    "is replaced on the next update without touching the others; destroy destroys every member.",
  inputs: {
    size: { type: "integer", description: "How many members (0 to 1000). Changing it adds members at the end or removes the last ones." },
    labelPrefix: { type: "string", description: "Member `i` is labelled `<labelPrefix>-<i>`. Default: the resource's name." },
    adoptIds: {
      type: "array",
      items: { type: "integer" },
      description:
        "Running instances to take as members 0, 1, ... when the fleet is created, instead of renting them (how a fleet of the " +
        "earlier component form moves to this one: docs/fleets.md). Read only at creation.",
    },
    ...Object.fromEntries(Object.entries(INSTANCE.inputs).filter(([name]) => !ONE_INSTANCE_ONLY.has(name))),
  },
  requiredInputs: ["size"],
  outputs: {
    members: { type: "array", items: { type: "object", object: MEMBER }, description: "Each member's state, in index order." },
    instanceIds: { type: "array", items: { type: "integer" }, description: "The members' instance ids, in index order." },
    sshEndpoints: { type: "array", items: { type: "object", object: SSH_ENDPOINT }, description: "Where to reach each member over SSH, in index order." },
    instanceApiKeys: {
      type: "array",
      items: { type: "string", nullable: true },
      secret: true,
      description: "Each member's own restricted key (`CONTAINER_API_KEY`), in index order; null for an adopted member. Kept secret.",
    },
  },
  requiredOutputs: ["members", "instanceIds", "sshEndpoints"],
};
