import * as pulumi from "@pulumi/pulumi";
import { GpuFleet, Instance, Template } from "gpu-rental/provider";

// One template holds what every worker shares; each instance made from it overrides what is its own.
const config = new pulumi.Config();

const template = new Template("worker", {
  name: "fleet-worker",
  image: "pytorch/pytorch",
  tag: "2.4.0-cuda12.4-cudnn9-runtime",
  desc: "A training worker with direct SSH",
  runtype: "ssh",
  sshDirect: true,
  useSsh: true,
  env: "-e WANDB_MODE=offline -e EPOCHS=10 -p 8080:8080",
  onstart: "nvidia-smi",
  recommendedDiskSpace: 32,
  // Registry credentials for a private image; the token stays a secret in state.
  dockerLoginRepo: config.get("registry") ?? "",
  dockerLoginUser: config.get("registryUser") ?? "",
  dockerLoginPass: config.getSecret("registryToken") ?? "",
});

// The template's values are the base; what an instance declares wins (env is merged key by key).
const workers = {
  small: { gpuModel: "RTX 4090", disk: 32, env: { EPOCHS: "5" } },
  large: { gpuModel: config.get("largeGpuModel") ?? "A100 SXM4", disk: 128, env: { EPOCHS: "50", SHARDS: "8" } },
};

const instances = Object.entries(workers).map(
  ([name, overrides]) =>
    new Instance(`worker-${name}`, {
      templateHashId: template.hashId,
      label: `fleet-${name}`,
      filters: { reliability: { gte: 0.95 } },
      ...overrides,
    }),
);

export const templateHashId = template.hashId;
export const instanceIds = instances.map((i) => i.instanceId);
export const ssh = instances.map((i) => pulumi.interpolate`ssh -p ${i.sshPort} root@${i.sshHost}`);

// Uniform workers: a fleet of the template's instances. Changing `fleetSize` adds or removes instances at the
// end; the others are left alone.
const fleet = new GpuFleet("pool", { size: config.getNumber("fleetSize") ?? 2, templateHashId: template.hashId, gpuCount: 1 });
export const fleetSsh = fleet.sshEndpoints.apply((endpoints) => endpoints.map((e) => `ssh -p ${e.port} root@${e.host}`));
