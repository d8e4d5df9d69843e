import * as fs from "node:fs";
import * as path from "node:path";
import { UserProgram } from "../helpers/user-program";
import { PROJECT } from "./own-program";
import { runnerEnv, runStep } from "./runner";

describe("gpu-rental test on a program that is not stable", () => {
  it("fails with a report naming the resource and input a second up would change, and a JUnit failure", async () => {
    const program = await UserProgram.create(
      "unstable",
      {
        "Pulumi.yaml": PROJECT("unstable", false),
        // The label changes on every run: a second up always wants to update it.
        "index.js": `const { Instance } = require("gpu-rental/provider");\nnew Instance("worker", { gpuModel: "RTX 3090", image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "run-" + Date.now() });\n`,
      },
      ["gpu-rental", "@pulumi/pulumi@3.248.0"],
    );
    try {
      const { code, output } = await runStep("npx gpu-rental test --junit report.xml", program.dir, runnerEnv());
      expect(code).toBe(1);
      expect(output).toMatch(/FAIL second up shows no changes/);
      expect(output).toMatch(/update worker \(label changed\)/);
      expect(output).toMatch(/PASS destroy/);
      expect(output).toMatch(/PASS nothing left in the emulator/);
      expect(output).toMatch(/gpu-rental test: \d+ of \d+ steps passed; failed: second up shows no changes/);
      const xml = fs.readFileSync(path.join(program.dir, "report.xml"), "utf8");
      expect(xml).toMatch(/failures="1"/);
      expect(xml).toMatch(/<failure message="the program is not stable/);
    } finally {
      program.remove();
    }
  }, 300_000);
});
