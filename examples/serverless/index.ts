import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { Endpoint, Template, WorkerGroup } from "gpu-rental/provider";

const config = new pulumi.Config();

// What a worker runs: Python's image, and onstart writing the model server beside it and starting it on port 8000
// (published, so the route can reach it). A new modelVersion edits the template: the workers roll onto it.
const server = fs.readFileSync(path.join(__dirname, "model_server.py"), "utf8");
const model = new Template("echo-model", {
  name: "echo-model",
  image: "python",
  tag: "3.11-slim",
  runtype: "ssh",
  env: `-p 8000:8000 -e MODEL_VERSION=${config.get("modelVersion") ?? "1"}`,
  onstart: `cat > model_server.py <<'PY'\n${server}PY\nnohup python3 model_server.py > model_server.log 2>&1 &\n`,
});

// Scales to zero after 5 idle minutes (no cold workers, no minimum load) and to at most 2 workers under load.
const name = config.get("endpointName") ?? "echo-llm";
const endpoint = new Endpoint("echo", {
  name,
  minLoad: 0,
  coldWorkers: 0,
  maxWorkers: 2,
  inactivityTimeout: 300,
});

// Workers on any single-GPU offer with 16 GB or more, from the most reliable machines.
const workers = new WorkerGroup("echo-workers", {
  endpointId: endpoint.endpointId,
  templateHash: model.hashId,
  gpuCount: 1,
  gpuRam: 16,
  filters: { reliability2: { gte: 0.9 } },
});

// The name `route` takes, once the endpoint exists.
export const endpointName = endpoint.endpointId.apply(() => name);
export const workerGroupId = workers.workerGroupId;
