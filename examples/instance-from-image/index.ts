import * as pulumi from "@pulumi/pulumi";
import { Instance, SshKey } from "gpu-rental/provider";

// The cheapest reliable, verified offer of a GPU model, running a container image with direct SSH.
const config = new pulumi.Config();

// Your SSH public key (the `.pub` line), registered on the account before the rental, so the instance takes it.
const sshPublicKey = config.get("sshPublicKey");
const login = sshPublicKey ? new SshKey("login", { publicKey: sshPublicKey }) : undefined;

const trainer = new Instance(
  "trainer",
  {
    gpuModel: config.get("gpuModel") ?? "RTX 4090",
    filters: { reliability: { gte: 0.95 }, verified: { eq: true } },
    maxPricePerHour: config.getNumber("maxPricePerHour"),
    image: config.get("image") ?? "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
    label: config.get("label") ?? "gpu-rental-demo",
    runtype: "ssh_direct",
    disk: 32,
  },
  { dependsOn: login ? [login] : [] },
);

export const instanceId = trainer.instanceId;
export const status = trainer.status;
export const gpuName = trainer.gpuName;
export const numGpus = trainer.numGpus;
export const pricePerHour = trainer.pricePerHour;
export const sshHost = trainer.sshHost;
export const sshPort = trainer.sshPort;
export const sshCommand = pulumi.interpolate`ssh -p ${trainer.sshPort} root@${trainer.sshHost}`;
