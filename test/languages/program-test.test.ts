import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { ensureToolchain } from "../../cli/toolchain";
import { isRunning } from "../helpers/processes";
import { UserProgram } from "../helpers/user-program";

const run = promisify(execFile);

// A YAML program whose instance gets a new label on every run (the machine's uptime): never stable.
const UNSTABLE = `name: unstable-yaml
runtime: yaml
resources:
  worker:
    type: gpu-rental:index:Instance
    properties:
      gpuModel: RTX 3090
      image: nvidia/cuda:12.4.1-runtime-ubuntu22.04
      label:
        fn::join:
          - ""
          - - run-
            - fn::select:
                - 0
                - fn::split: [" ", { fn::readFile: /proc/uptime }]
`;

/** `gpu-rental test` on a YAML program fails, as on a TypeScript one, when a second up would change something. */
it("gpu-rental test fails a YAML program that a second up would change, with its report", async () => {
  const program = await UserProgram.create("unstable-yaml", { "Pulumi.yaml": UNSTABLE }, ["gpu-rental", "@pulumi/pulumi@3.248.0"]);
  try {
    const env = { ...process.env, PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}` };
    const result = await run("bash", ["-c", "npx gpu-rental test --junit report.xml"], { cwd: program.dir, env, maxBuffer: 64 << 20 })
      .then(({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }))
      .catch((error) => ({ code: error.code as number, output: `${error.stdout}${error.stderr}` }));
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/gpu-rental test: .*emulator http:\/\/127\.0\.0\.1:\d+ \(the service's rate limits per key\)/);
    expect(result.output).toMatch(/PASS install \(yaml\)/);
    expect(result.output).toMatch(/PASS up/);
    expect(result.output).toMatch(/FAIL second up shows no changes/);
    expect(result.output).toMatch(/update worker \([^)]*label[^)]*changed\)/);
    expect(result.output).toMatch(/PASS destroy/);
    expect(result.output).toMatch(/PASS nothing left in the emulator/);
    expect(result.output).toMatch(/PASS nothing left running/);
    expect(result.output).toMatch(/gpu-rental test: \d+ of \d+ steps passed; failed: second up shows no changes/);
    expect(fs.readFileSync(path.join(program.dir, "report.xml"), "utf8")).toMatch(/failures="1"/);
  } finally {
    program.remove();
  }
}, 600_000);

/**
 * `gpu-rental test` fails a run that leaves a process behind (here the program starts one that outlives it), names
 * it and ends it: every process the run starts carries its mark, down to what the program starts.
 */
it("gpu-rental test fails a program that leaves a process running, and ends it", async () => {
  const leaking = "require(\"node:child_process\").spawn(\"sleep\", [\"300\"], { detached: true, stdio: \"ignore\" }).unref();\nexports.started = \"yes\";\n";
  const program = await UserProgram.create("leaking-js", { "Pulumi.yaml": "name: leaking-js\nruntime: nodejs\nmain: index.js\n", "index.js": leaking }, ["gpu-rental", "@pulumi/pulumi@3.248.0"]);
  try {
    const env = { ...process.env, PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}` };
    const result = await run("bash", ["-c", "npx gpu-rental test --expect started=yes"], { cwd: program.dir, env, maxBuffer: 64 << 20 })
      .then(({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }))
      .catch((error) => ({ code: error.code as number, output: `${error.stdout}${error.stderr}` }));
    expect(result.output).toMatch(/PASS destroy/);
    expect(result.output).toMatch(/FAIL nothing left running \([\d.]+ s\)\n\s+process \d+ \(sleep 300\)(, process \d+ \(sleep 300\))* still ran after the run ended \(stopped now\)/);
    expect(result.code).toBe(1);
    const pids = [...result.output.matchAll(/process (\d+) \(sleep 300\)/g)].map((m) => Number(m[1]));
    expect(pids.length).toBeGreaterThan(0);
    expect(pids.filter(isRunning)).toEqual([]);
  } finally {
    program.remove();
  }
}, 600_000);
