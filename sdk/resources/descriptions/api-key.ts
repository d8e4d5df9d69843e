import { ADOPT_ID, ResourceDescription } from "./description";

export const API_KEY: ResourceDescription = {
  name: "ApiKey",
  description:
    "An API key of the account. Its permissions cannot be edited: any change issues a new key (with a new `key`) before the old " +
    "one is revoked.",
  inputs: {
    name: { type: "string", description: "The key's name." },
    permissions: {
      type: "map",
      values: { type: "any" },
      tsType: "PermissionSet",
      description: "`{ api: { instance_read: {} } }`: the categories the key may use. Without it the key has full access.",
    },
    adoptId: ADOPT_ID,
  },
  outputs: {
    keyId: { type: "integer", description: "The key's id (also the resource's id)." },
    key: { type: "string", nullable: true, secret: true, description: "The key's value, shown by the service once: a secret output (null when adopted or imported)." },
    keyPrefix: { type: "string", nullable: true, description: "The first characters of the key, as the console shows them." },
  },
  requiredOutputs: ["keyId"],
};
