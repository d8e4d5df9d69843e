import * as pulumi from "@pulumi/pulumi";
import { Instance, NetworkVolume } from "gpu-rental/provider";

// Datasets live on a network volume that outlives any one instance; the instance mounts it.
const config = new pulumi.Config();

const datasets = new NetworkVolume("datasets", {
  // The cheapest verified offer with room for `size` GB in the countries given.
  q: { verified: { eq: true }, geolocation: { in: config.getObject<string[]>("countries") ?? ["US", "CA"] } },
  size: config.getNumber("sizeGb") ?? 100,
  name: "datasets",
});

const trainer = new Instance(
  "trainer",
  {
    gpuModel: config.get("gpuModel") ?? "RTX 4090",
    image: "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
    label: "trainer-with-datasets",
    volume: { volumeId: datasets.volumeId, mountPath: "/datasets" },
  },
  // Destroyed before the volume: a volume still attached cannot be deleted.
  { dependsOn: [datasets] },
);

export const volumeId = datasets.volumeId;
export const volumeLocation = datasets.geolocation;
export const volumeCostPerHour = datasets.storageCostTotal;
export const instanceId = trainer.instanceId;
export const ssh = pulumi.interpolate`ssh -p ${trainer.sshPort} root@${trainer.sshHost}`;
