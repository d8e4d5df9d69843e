import * as pulumi from "@pulumi/pulumi";
import { Account, Instance, NetworkVolume } from "gpu-rental/provider";

// Resources without an account use the provider's default one (stack config gpu-rental:apiKey, or the
// environment's GPU_RENTAL_API_KEY). The team's account reads its key from the secret stack config
// gpu-rental:teamApiKey: `pulumi config set --secret gpu-rental:teamApiKey <key>`. Keys never enter state.
const config = new pulumi.Config();
const team = new Account("team");

const sandbox = new Instance("personal-sandbox", {
  gpuModel: "RTX 3060",
  image: "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
  label: "personal-sandbox",
});

const teamData = new NetworkVolume("team-datasets", { q: { verified: { eq: true } }, size: 50, name: "team-datasets" }, { account: team });
const teamTrainer = new Instance(
  "team-trainer",
  {
    gpuModel: config.get("teamGpuModel") ?? "H100 SXM",
    image: "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
    label: "team-trainer",
    volume: { volumeId: teamData.volumeId, mountPath: "/datasets" },
  },
  { account: team, dependsOn: [teamData] },
);

export const sandboxId = sandbox.instanceId;
export const teamTrainerId = teamTrainer.instanceId;
export const teamVolumeId = teamData.volumeId;
