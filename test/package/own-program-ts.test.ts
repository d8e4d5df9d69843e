import { TYPE_CHECK } from "../helpers/pulumi-stack";
import { ownProgramScenario, PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "./own-program";

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { Instance, Template } from "gpu-rental/provider";

const config = new pulumi.Config();
const base = new Template("base", { name: "own-base", image: "nvidia/cuda", tag: "12.4.1-runtime-ubuntu22.04", runtype: "ssh", sshDirect: true, useSsh: true });
const worker = new Instance("worker", { gpuModel: "RTX 4090", templateHashId: base.hashId, label: config.require("label") });

export const instanceId = worker.instanceId;
export const hashId = base.hashId;
`;

// Type-checked by the engine, as `pulumi new typescript` programs are: the package's types must resolve there.
describe("a TypeScript program with @pulumi/pulumi 3.248.0 and the packed package, outside the repository", () => {
  ownProgramScenario(
    "own-ts",
    { "Pulumi.yaml": PROJECT("own-ts", true), "index.ts": PROGRAM, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG },
    TYPESCRIPT_PROGRAM,
    TYPE_CHECK,
  );
});
