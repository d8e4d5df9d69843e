import { ownProgramScenario, PROJECT } from "./own-program";

const PROGRAM = `"use strict";
const pulumi = require("@pulumi/pulumi");
const { Instance, Template } = require("gpu-rental/provider");

const config = new pulumi.Config();
const base = new Template("base", { name: "own-base", image: "nvidia/cuda", tag: "12.4.1-runtime-ubuntu22.04", runtype: "ssh", sshDirect: true, useSsh: true });
const worker = new Instance("worker", { gpuModel: "RTX 4090", templateHashId: base.hashId, label: config.require("label") });

exports.instanceId = worker.instanceId;
exports.hashId = base.hashId;
`;

describe("a JavaScript program with @pulumi/pulumi 3.200.0 (the oldest supported) and the packed package", () => {
  ownProgramScenario("own-js", { "Pulumi.yaml": PROJECT("own-js", false), "index.js": PROGRAM }, { packages: ["gpu-rental", "@pulumi/pulumi@3.200.0"] });
});
