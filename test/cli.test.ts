import { execFile, spawnSync } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { rentInstance } from "../sdk";
import { emulatorProcess, killHard } from "./helpers/emulator-process";
import { emulator, http } from "./helpers/emulator";
import { REPO_ROOT } from "./helpers/paths";

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), ...args], { encoding: "utf8", timeout: 20_000 });

describe("gpu-rental command", () => {
  it("prints its usage, with every command, and its version", () => {
    const res = cli("--help");
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/emulator[\s\S]*test[\s\S]*deploy[\s\S]*sweep[\s\S]*spend[\s\S]*plugin[\s\S]*toolchain/);
    const version = cli("--version");
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(require("../package.json").version);
  });

  it.each(["emulator", "test", "deploy", "sweep", "spend", "plugin", "plugin install", "toolchain", "help test"])(
    "gpu-rental %s --help: its own usage, options with their defaults, an example; exit 0, nothing run",
    (line) => {
      const command = line.split(" ");
      const res = cli(...command, ...(command[0] === "help" ? [] : ["--help"]));
      expect(res.status).toBe(0);
      const name = command[0] === "help" ? command[1] : command.join(" ");
      expect(res.stdout).toMatch(new RegExp(`^Usage: gpu-rental ${name} `));
      expect(res.stdout).toMatch(/\nExamples?:\n {2}\$ /);
      expect(res.stdout).not.toMatch(/\[toolchain\]|Control API:/);
      expect(res.stderr).toBe("");
    },
  );

  it("shows each option's default", () => {
    const emulator = cli("emulator", "--help").stdout;
    expect(emulator).toMatch(/--port <n>\s+listen on 127\.0\.0\.1:N \(default: a free port\)/);
    expect(emulator).toMatch(/--offers <n>\s+offers in the seeded market \(default: 300\)/);
    expect(cli("test", "--help").stdout).toMatch(/--parallel <n>[\s\S]*\(default: one per resource of the program, at least\s+64\)/);
  });

  it("suggests the option meant, and shows the command's usage, for a misspelt one", () => {
    const res = cli("test", "--expct", "ssh");
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/unknown option '--expct'\n\(Did you mean --expect\?\)/);
    expect(res.stderr).toMatch(/Usage: gpu-rental test \[options\] \[dir\]/);
  });

  it.each([
    [["emulator", "--port", "http"], /option '--port <n>' argument 'http' is invalid\. It must be a number from 0 to 65535/],
    [["emulator", "--contention", "2"], /argument '2' is invalid\. It must be a number from 0 to 1/],
    [["emulator", "--api-key", "short"], /An API key is at least 8 characters/],
    [["emulator", "--colour"], /unknown option '--colour'/],
    [["launch"], /unknown command 'launch'/],
    [["tset"], /unknown command 'tset'\n\(Did you mean test\?\)/],
    [["sweep"], /sweep needs --token-prefix, --token, --label or --stack/],
    [["plugin", "instal"], /\(Did you mean install\?\)/],
    [["test", "--parallel", "1.5"], /It must be a whole number/],
    [["deploy", "--parallel", "0"], /It must be a number from 1 to 100000/],
  ])("refuses %j with a clear message, the command's usage and exit code 2", (args, message) => {
    const res = cli(...args);
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).toMatch(/Usage: gpu-rental/);
  });

  it("toolchain --env prints the line that puts pulumi on PATH, for eval", () => {
    const bin = path.join(REPO_ROOT, "bin", "gpu-rental.js");
    const res = spawnSync("bash", ["-c", `eval "$("${process.execPath}" "${bin}" toolchain --env)" && pulumi version`], {
      encoding: "utf8",
      env: { ...process.env, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
      timeout: 120_000,
    });
    expect(res.stderr).toMatch(/\[toolchain\] /);
    expect(res.stdout.trim()).toBe("v3.248.0");
    expect(res.status).toBe(0);
  });

  it.each(["spend", "sweep"])("gpu-rental %s without an account says to export both variables, for that command", (command) => {
    const res = spawnSync(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), command, "--label", "train"], {
      encoding: "utf8",
      env: { ...process.env, GPU_RENTAL_API_URL: "", GPU_RENTAL_API_KEY: "" },
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^gpu-rental ${command}: GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY are not set: gpu-rental ${command} reads the account from the environment only\\. Run \`export GPU_RENTAL_API_URL=`));
    expect(res.stderr).not.toMatch(/pulumi config/);
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
    // No emulated machines: a process killed with SIGKILL cannot remove their folder.
    const running = await emulatorProcess(["--api-key", "legacy-listing-key", "--no-ssh", ...args], { GPU_RENTAL_LEGACY_INSTANCE_LISTING: "", ...env });
    try {
      const res = await http(running.url, "GET", "/api/v0/instances/", { key: "legacy-listing-key" });
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject(status === 200 ? { instances: [] } : { error: "deprecated_endpoint" });
    } finally {
      await killHard(running);
    }
  });
});

describe("gpu-rental emulator --account-key", () => {
  it("names each further account by its key's place and its user id, never as a bare number", async () => {
    const running = await emulatorProcess(["--api-key", "seeded-key", "--account-key", "team-key", "--account-key", "other-key", "--no-ssh"]);
    try {
      const lines = await running.waitFor(/^Account of --account-key #2: .*$/m);
      const out = running.output();
      expect(out).not.toMatch(/Further accounts/);
      for (const [place, key] of [[1, "team-key"], [2, "other-key"]] as const) {
        const me = (await http(running.url, "GET", "/api/v0/users/current/", { key })).body;
        expect(out).toContain(`Account of --account-key #${place}: user id ${me.id} (${me.email})`);
      }
      expect(lines[0]).toMatch(/user id \d+ \(account-3@accounts\.gpu-rental\.test\)$/);
    } finally {
      await running.stop();
    }
  });
});
