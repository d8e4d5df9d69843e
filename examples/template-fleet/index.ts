import * as pulumi from "@pulumi/pulumi";
import { ApiKey, Instance, NetworkVolume, Template } from "gpu-rental/provider";

// Two workers from one template, a network volume for their datasets, and a read-only key for a dashboard.
// Stack config (all optional): pulumi config set gpuModel "RTX 4090"; pulumi config set --secret registryToken ...
const config = new pulumi.Config();

const template = new Template("worker", {
  name: "fleet-worker",
  image: "pytorch/pytorch",
  tag: "2.4.0-cuda12.4-cudnn9-runtime",
  desc: "A training worker with direct SSH",
  runtype: "ssh",
  sshDirect: true,
  useSsh: true,
  env: "-e WANDB_MODE=offline -p 8080:8080",
  onstart: "nvidia-smi",
  recommendedDiskSpace: 32,
  // Registry credentials for a private image; the token stays a secret in state.
  dockerLoginRepo: config.get("registry") ?? "",
  dockerLoginUser: config.get("registryUser") ?? "",
  dockerLoginPass: config.getSecret("registryToken") ?? "",
});

// The cheapest verified network volume offer with 100 GB free, in North America.
const datasets = new NetworkVolume("datasets", {
  q: { verified: { eq: true }, geolocation: { in: ["US", "CA"] } },
  size: 100,
  name: "fleet-datasets",
});

// A change to the template gives it a new hashId: the workers are then replaced, as they run its old content.
const workers = ["a", "b"].map(
  (suffix) =>
    new Instance(`worker-${suffix}`, {
      gpuModel: config.get("gpuModel") ?? "RTX 4090",
      filters: { reliability: { gte: 0.95 } },
      templateHashId: template.hashId,
      label: `fleet-worker-${suffix}`,
      // Both mount the datasets volume (a network volume can serve several instances).
      volume: { volumeId: datasets.volumeId, mountPath: "/datasets" },
    }),
);

// For a dashboard: it may read instances, nothing else. Its value is a secret output.
const dashboardKey = new ApiKey("dashboard", { name: "fleet-dashboard", permissions: { api: { instance_read: {} } } });

export const templateHashId = template.hashId;
export const volumeId = datasets.volumeId;
export const volumeLocation = datasets.geolocation;
export const ssh = workers.map((w) => pulumi.interpolate`ssh -p ${w.sshPort} root@${w.sshHost}`);
export const dashboardApiKey = dashboardKey.key;
