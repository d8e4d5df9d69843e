import { execFile, spawnSync } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { rentInstance } from "../sdk";
import { emulator } from "./helpers/emulator";
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
    [["sweep"], /sweep needs --token-prefix, --token or --label/],
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
});
