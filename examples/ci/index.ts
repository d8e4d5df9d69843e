import * as pulumi from "@pulumi/pulumi";
import { Instance, Template } from "gpu-rental/provider";

// The GPU infrastructure a team deploys from CI: an inference template and the instances serving from it.
// .github/workflows/gpu-infrastructure.yml tests it against the emulator on every pull request, previews it
// against the real service, deploys it from main and checks it for drift every night.
const config = new pulumi.Config();

// Each CI job brings its own key in GPU_RENTAL_API_KEY (the preview's may only read). Stack config wins over the
// environment: a key there would run every job, pull requests' previews included, with it. So none may be there.
if (new pulumi.Config("gpu-rental").getSecret("apiKey") !== undefined) {
  throw new pulumi.RunError(
    "This program takes its API key from GPU_RENTAL_API_KEY (each CI job's own secret), never from stack config: " +
      "run `pulumi config rm gpu-rental:apiKey` and set GPU_RENTAL_API_KEY instead.",
  );
}
const replicas = config.getNumber("replicas") ?? 2;

const server = new Template("inference", {
  name: "inference-server",
  image: "vllm/vllm-openai",
  tag: config.get("vllmVersion") ?? "v0.6.3",
  runtype: "ssh",
  sshDirect: true,
  useSsh: true,
  env: "-p 8000:8000",
  onstart: "python -m vllm.entrypoints.openai.api_server --port 8000 --model $MODEL",
  recommendedDiskSpace: 64,
});

const replicaInstances = Array.from(
  { length: replicas },
  (_, i) =>
    new Instance(`inference-${i}`, {
      templateHashId: server.hashId,
      gpuModel: config.get("gpuModel") ?? "L40S",
      filters: { reliability: { gte: 0.97 }, verified: { eq: true } },
      maxPricePerHour: config.getNumber("maxPricePerHour") ?? 2,
      env: { MODEL: config.get("model") ?? "mistralai/Mistral-7B-Instruct-v0.3" },
      label: `inference-${i}`,
    }),
);

export const templateHashId = server.hashId;
export const replicaCount = replicaInstances.length;
export const endpoints = replicaInstances.map((r) => pulumi.interpolate`${r.sshHost}:${r.sshPort}`);
