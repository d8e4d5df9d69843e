import { execFile, spawnSync } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { rentInstance } from "../sdk";
import { emulatorProcess, killHard } from "./helpers/emulator-process";
import { emulator, http } from "./helpers/emulator";
import { REPO_ROOT } from "./helpers/provider-host";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), ...args], { encoding: "utf8", timeout: 20_000 });

describe("gpu-rental command", () => {
  it("prints its usage", () => {
    const res = cli("--help");
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/emulator[\s\S]*deploy[\s\S]*toolchain/);
  });

  it.each([
    [["emulator", "--port", "http"], /--port must be a number from 0 to 65535/],
    [["emulator", "--contention", "2"], /--contention must be a number from 0 to 1/],
    [["emulator", "--api-key", "short"], /--api-key must be at least 8 characters/],
    [["emulator", "--colour"], /Unknown option '--colour'/],
    [["launch"], /Unknown command "launch"/],
    [["sweep"], /sweep needs --token-prefix, --token, --label or --stack/],
    [["test", "--parallel", "1.5"], /--parallel must be a whole number/],
    [["deploy", "--parallel", "0"], /--parallel must be a number from 1 to 100000/],
  ])("refuses %j with a clear message and exit code 2", (args, message) => {
    const res = cli(...args);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});

describe("gpu-rental sweep", () => {
  it("lists on a dry run, then destroys, only what carries the run's token prefix; the key comes from the environment", async () => {
    const emu = await emulator();
    try {
      const client = emu.client();
      const left = await rentInstance(client, {}, { image: "x" }, { tokenPrefix: "nightly42" });
      const kept = await rentInstance(client, {}, { image: "x" });
      const sweep = async (...args: string[]) =>
        (
          await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "sweep", ...args], {
            env: { ...process.env, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey },
          })
        ).stdout;
      const dry = await sweep("--token-prefix", "nightly42", "--dry-run");
      expect(dry).toContain(`would destroy: instance ${left.instanceId} (token ${left.token})`);
      expect(dry).toMatch(/dry run: nothing was changed/);
      expect(emu.marketplace.instances.all()).toHaveLength(2);
      const real = await sweep("--token-prefix", "nightly42");
      expect(real).toContain(`destroyed: instance ${left.instanceId}`);
      expect(real).not.toContain(emu.apiKey);
      expect(emu.marketplace.instances.all().map((i) => i.id)).toEqual([kept.instanceId]);
      expect(await sweep("--token-prefix", "nightly42")).toMatch(/sweep: nothing found/);
    } finally {
      await emu.close();
    }
  });

  it.each([410, 200])("stops with exit 1 and destroys nothing when the listing answers the deprecation body (status %d)", async (status) => {
    const emu = await emulator();
    try {
      const left = await rentInstance(emu.client(), {}, { image: "x" }, { tokenPrefix: "nightly43" });
      emu.faults.add({ path: "/api/v1/instances/", kind: "deprecated", status, times: 100 });
      const res = await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "sweep", "--token-prefix", "nightly43"], {
        env: { ...process.env, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey },
      }).catch((e) => e);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/The instance listing \(GET \/api\/v1\/instances\/\) failed: .*deprecated_endpoint.*not an empty listing/);
      expect(res.stdout).not.toMatch(/destroyed/);
      expect(emu.marketplace.instances.all().map((i) => i.id)).toEqual([left.instanceId]);
    } finally {
      await emu.close();
    }
  });
});

describe("gpu-rental emulator --legacy-instance-listing", () => {
  it.each([
    ["without it: the live service's deprecation", [], {}, 410],
    ["the flag: the old listing", ["--legacy-instance-listing"], {}, 200],
    ["GPU_RENTAL_LEGACY_INSTANCE_LISTING=1: the old listing", [], { GPU_RENTAL_LEGACY_INSTANCE_LISTING: "1" }, 200],
  ])("%s", async (_name, args, env, status) => {
    const running = await emulatorProcess(["--api-key", "legacy-listing-key", ...args], { GPU_RENTAL_LEGACY_INSTANCE_LISTING: "", ...env });
    try {
      const res = await http(running.url, "GET", "/api/v0/instances/", { key: "legacy-listing-key" });
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject(status === 200 ? { instances: [] } : { error: "deprecated_endpoint" });
    } finally {
      await killHard(running);
    }
  });
});
