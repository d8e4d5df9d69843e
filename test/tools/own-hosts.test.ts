import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { ensureToolchain } from "../../cli/toolchain";
import { REPO_ROOT } from "../helpers/paths";

const run = promisify(execFile);
const { DECOYS } = require("../helpers/decoy-hosts");

/** The toolchain script's settings for Go (tools/pulumi-toolchain.sh): the same flags, so the build cache serves. */
const GO_ENV = { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-mod=readonly", GONOSUMDB: "github.com/pulumi" };
const GO_FLAGS = ["-trimpath", "-tags", "osusergo,grpcnotrace"];
const MODULE = path.join(REPO_ROOT, "tools", "pulumi");

describe("gpu-rental's language host, checked and tested in Go", () => {
  it.concurrent("go vet finds nothing in it", async () => {
    const vet = await run("go", ["vet", ...GO_FLAGS, "./language-host"], { cwd: MODULE, env: GO_ENV }).catch((error) => error);
    expect(`${vet.stdout}${vet.stderr}`.trim()).toBe("");
    expect(vet.code ?? 0).toBe(0);
  });

  it.concurrent("its Go tests pass, run afresh (what each runtime is handed, discovery, bad programs, buildTarget, stopping)", async () => {
    const test = await run("go", ["test", "-count=1", "-json", ...GO_FLAGS, "./language-host"], { cwd: MODULE, env: GO_ENV, maxBuffer: 32 << 20 }).catch((error) => error);
    const events = String(test.stdout)
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { Action: string; Test?: string; Output?: string });
    const passed = events.filter((e) => e.Action === "pass" && e.Test).map((e) => e.Test);
    const failed = events.filter((e) => e.Action === "fail" && e.Test).map((e) => e.Test);
    const output = events.map((e) => e.Output ?? "").join("");
    expect({ failed, code: test.code ?? 0, output: failed.length || test.code ? output + String(test.stderr) : "" }).toEqual({ failed: [], code: 0, output: "" });
    // The tests the issue asks for are there and ran.
    expect(passed).toEqual(
      expect.arrayContaining([
        "TestEachRuntimeIsHandedTheSameLaunchInItsOwnForm",
        "TestNodePackagesDeclareTheirPluginsInEitherPlace",
        "TestAGoProgramIsBuiltRunAndHandedItsLaunch",
        "TestAGoProgramThatDoesNotBuildSaysWhatToDo",
        "TestAPythonProgramWithoutItsVirtualEnvironmentSaysWhatToDo",
        "TestAHostStartedUnderAnotherNameSaysWhichItServes",
      ]),
    );
  });
});

describe("the suite runs gpu-rental's own hosts, whatever else is installed", () => {
  it("has decoys of Pulumi's CLI and hosts first on PATH, each failing loudly when run", async () => {
    const decoys = process.env.GPU_RENTAL_DECOYS!;
    expect(process.env.PATH!.split(path.delimiter)[0]).toBe(decoys);
    for (const name of DECOYS as string[]) {
      expect(execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim()).toBe(path.join(decoys, name));
    }
    // Run by hand here with the log pointed elsewhere, so this check does not itself count as a decoy that ran.
    const script = fs.readFileSync(path.join(decoys, "pulumi-language-python"), "utf8").replace(path.join(decoys, "ran.log"), "/dev/null");
    const ran = await run("sh", ["-c", script]).catch((error) => error);
    expect(ran.code).toBe(97);
    expect(ran.stderr).toMatch(/DECOY .*: the test suite ran a Pulumi program that is not gpu-rental's/);
  });

  it("has a toolchain whose hosts are built from tools/pulumi/language-host, not found on PATH", async () => {
    const bin = ensureToolchain({ languages: ["python", "go"] }).bin;
    expect(bin.startsWith(process.env.GPU_RENTAL_DECOYS!)).toBe(false);
    for (const language of ["nodejs", "python", "go"]) {
      // Go records in a binary the package it was built from.
      const { stdout } = await run("go", ["version", "-m", path.join(bin, `pulumi-language-${language}`)]);
      expect(stdout).toMatch(/^\s+path\s+gpu-rental\/tools\/pulumi\/language-host$/m);
    }
  });

  it("leaves a user's own pulumi to `gpu-rental toolchain` when the suite does not force the build", async () => {
    const mine = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-own-pulumi-"));
    try {
      for (const name of [...DECOYS, "pulumi-language-yaml"]) fs.writeFileSync(path.join(mine, name), "#!/bin/sh\necho v3.248.0\n", { mode: 0o755 });
      const env: Record<string, string | undefined> = { ...process.env, PATH: [mine, process.env.PATH].join(path.delimiter) };
      delete env.GPU_RENTAL_BUILD_PULUMI;
      const { stdout, stderr } = await run(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "toolchain"], { env, cwd: REPO_ROOT });
      expect(stdout.trim()).toBe(mine);
      expect(stderr).toMatch(new RegExp(`using v3\\.248\\.0 from PATH \\(${mine}\\)`));
    } finally {
      fs.rmSync(mine, { recursive: true, force: true });
    }
  });
});

describe("a clone before its first build", () => {
  it("gpu-rental says in one line to build first", async () => {
    const clone = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-unbuilt-"));
    try {
      fs.mkdirSync(path.join(clone, "bin"));
      fs.copyFileSync(path.join(REPO_ROOT, "bin", "gpu-rental.js"), path.join(clone, "bin", "gpu-rental.js"));
      const result = await run(process.execPath, [path.join(clone, "bin", "gpu-rental.js"), "--help"]).catch((error) => error);
      expect(result.code).toBe(1);
      expect(result.stderr.trim()).toBe(`gpu-rental: ${path.join(clone, "dist")} is not built yet: run \`npm run build\` in ${clone} first`);
    } finally {
      fs.rmSync(clone, { recursive: true, force: true });
    }
  });
});
