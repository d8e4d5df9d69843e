import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { Deployment } from "gpu-rental/provider";

const config = new pulumi.Config();

// The folder `code/` is the deployment's Python package; its bundle's hash decides a new version: an `up` with the
// same code changes nothing, a changed file is one update (the workers roll onto the new version).
const square = new Deployment("square", {
  name: "square",
  codeFolder: path.join(__dirname, "code"),
  image: "vastai/base-image:latest",
  storage: 16,
  environment: { MODEL_NOTE: config.get("note") ?? "first" },
  // One worker kept serving (minLoad above 0), never more than two.
  minLoad: 1,
  coldWorkers: 0,
  maxWorkers: 2,
});

export const deploymentId = square.deploymentId;
export const endpointId = square.endpointId;
// The name `route` takes: the endpoint the service made for the deployment.
export const endpointName = square.endpointName;
export const currentVersionId = square.currentVersionId;
