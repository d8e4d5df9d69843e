import * as path from "node:path";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
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

const INSTALL = { packages: ["gpu-rental", "@pulumi/pulumi@3.200.0"] };

describe("a JavaScript program with @pulumi/pulumi 3.200.0 (the oldest supported) and the packed package", () => {
  ownProgramScenario("own-js", { "Pulumi.yaml": PROJECT("own-js", false), "index.js": PROGRAM }, INSTALL);
});

/**
 * Mistakes that JavaScript lets through, each its own program (the same install, copied): preview fails naming
 * the input, and rents nothing; criteria no offer meets are a preview warning. Their previews run side by side.
 */
const MISTAKES: Record<string, { inputs: string; fails?: RegExp; warns?: RegExp }> = {
  "misspelt-input": { inputs: `gpuModel: "RTX 4090", maxLifetme: "10m"`, fails: /property maxLifetme value .* has a problem: maxLifetme is not an input of Instance: did you mean maxLifetime\?/ },
  "misspelt-filter": {
    inputs: `gpuModel: "RTX 4090", filters: { reliabilty: { gte: 0.99 } }`,
    fails: /property filters value .* has a problem: filters\.reliabilty: not a field the search filters on .*did you mean reliability\?/,
  },
  "operand-type": { inputs: `gpuModel: "RTX 4090", filters: { reliability: { gte: "high" } }`, fails: /property filters value .* has a problem: filters\.reliability\.gte: reliability takes a number/ },
  "no-match": { inputs: `gpuModel: "RTX 4909"`, warns: /warning: gpu-rental Instance: No offer matches \{.*"gpu_name":\{"eq":"RTX 4909"\}.* on the market now/ },
};

const mistake = (inputs: string) => `"use strict";
const { Instance } = require("gpu-rental/provider");
new Instance("worker", { image: "pytorch/pytorch", ${inputs} });
`;

describe("a JavaScript program's mistakes, at preview", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  const previews: Record<string, { code: number; output: string }> = {};

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running") });
    const files = Object.entries(MISTAKES).flatMap(([name, { inputs }]) => [
      [`${name}/Pulumi.yaml`, PROJECT(`own-js-${name}`, false)],
      [`${name}/index.js`, mistake(inputs)],
    ]);
    program = await UserProgram.create("own-js-mistakes", Object.fromEntries(files), INSTALL.packages);
    const started = Date.now();
    await Promise.all(
      Object.keys(MISTAKES).map(async (name) => {
        // Each its own project, in a folder of the program: node_modules is found in the folder above. The
        // provider reads the service from the environment (no stack config: one engine run less each).
        const stack = new TestStack(`mistake-${process.pid}`, { GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey }, path.join(program.dir, name));
        await stack.init({}, {});
        const { code, stdout, stderr } = await stack.run("preview");
        previews[name] = { code, output: stdout + stderr };
        await stack.remove();
      }),
    );
    console.log(`previews: ${Date.now() - started} ms`);
  }, 300_000);

  afterAll(async () => {
    await emu?.close();
    program?.remove();
  });

  it.each(Object.entries(MISTAKES).filter(([, m]) => m.fails))("%s fails preview naming the input", (name, { fails }) => {
    expect(previews[name]).toEqual({ code: 1, output: expect.stringMatching(fails!) });
  });

  it("criteria no offer meets: preview warns, and succeeds", () => {
    expect(previews["no-match"]).toEqual({ code: 0, output: expect.stringMatching(MISTAKES["no-match"].warns!) });
  });

  it("nothing was rented", () => {
    expect(emu.marketplace.instances.all()).toEqual([]);
  });
});
