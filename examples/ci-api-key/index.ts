import { ApiKey } from "gpu-rental/provider";

// The key a CI pipeline uses for `pulumi preview` and the scheduled drift check (`pulumi refresh`): it may read
// instances, volumes, templates and keys (refresh reads each resource) and search offers, but it cannot rent,
// change or destroy anything, nor see billing. Give the deploying job its own key.
const ciKey = new ApiKey("ci-preview", {
  name: "ci-preview",
  permissions: { api: { misc: {}, user_read: {}, instance_read: {} } },
});

export const previewKeyId = ciKey.keyId;
// A secret output: `pulumi stack output previewKey --show-secrets` shows it, to store as a CI secret.
export const previewKey = ciKey.key;
