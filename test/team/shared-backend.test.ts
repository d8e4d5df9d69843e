import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { pulumiEnv } from "../../cli/pulumi";
import { Clock } from "../../emulator";
import { stackHoldings } from "../../sdk";
import { runCutOff } from "../helpers/cut-off";
import { emulator, TestEmulator } from "../helpers/emulator";
import { startPostgres, PostgresServer } from "../helpers/postgres";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT } from "../package/own-program";

const run = promisify(execFile);

/**
 * A team's CI: many runners, one account, the stacks' state in one shared backend. The backend is a PostgreSQL
 * server of the test's own (Pulumi's `postgres://` backend); the account is one emulator per scene; each runner has
 * its own Pulumi home, its own checkout of the project (the stacks' config files committed in it, as a repository
 * has them) and its own environment, as separate CI machines do, with the team's secrets: the backend's URL, the
 * stacks' passphrase and the account's key.
 */

/** `count` Instances and a GpuFleet of `fleet`, labelled by stack. */
const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const { GpuFleet, Instance } = require("gpu-rental/provider");

const config = new pulumi.Config();
const stack = pulumi.getStack();
exports.ids = Array.from({ length: config.getNumber("count") ?? 8 }, (_, i) =>
  new Instance(\`worker-\${i}\`, { gpuCount: 1, image: "pytorch/pytorch", label: \`\${stack}-worker-\${i}\` }).instanceId);
exports.members = new GpuFleet("pool", { size: config.getNumber("fleet") ?? 8, gpuCount: 1, image: "pytorch/pytorch" }).instanceIds;
`;

const QUICK_BOOTS = { provisioningMs: 50, loadingMs: 100 };
const HOUR = 3_600_000;
const SLOW_BOOTS = { provisioningMs: HOUR, loadingMs: 0 };

/** What every scene shares: the backend, the installed program, the team's passphrase, a folder for checkouts. */
interface Team {
  pg: PostgresServer;
  program: UserProgram;
  scratch: string;
  passphraseFile: string;
}

/**
 * Made once for the file, when its first test asks (concurrent tests start before any beforeAll would have run),
 * and taken down after the last.
 */
const shared: Promise<Team> = (async () => {
  const files = { "Pulumi.yaml": PROJECT("team", false), "index.js": PROGRAM };
  const [pg, program] = await Promise.all([startPostgres(), UserProgram.create("team", files, ["gpu-rental", "@pulumi/pulumi@3.248.0"])]);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-team-"));
  // The stacks' passphrase: one CI secret of the team's, the same on every runner.
  const passphraseFile = path.join(scratch, "passphrase");
  fs.writeFileSync(passphraseFile, "the team's stack passphrase", { mode: 0o600 });
  // The team opened its backend once before its runners used it: the first user of a new database makes the
  // state's table, and runners that all came first at once would collide there (docs/team.md).
  const opener = new TestStack("opener", { PULUMI_BACKEND_URL: pg.url }, program.dir);
  await runPulumiIn(opener, ["stack", "ls"]);
  await opener.remove();
  return { pg, program, scratch, passphraseFile };
})();
void shared.catch(() => undefined); // its failure is each test's, not an unhandled rejection of the file

afterAll(async () => {
  const team = await shared.catch(() => undefined);
  await team?.pg.stop();
  team?.program.remove();
  if (team) fs.rmSync(team.scratch, { recursive: true, force: true });
}, 60_000);

/** The account of a scene, and the team's repository: the program with the scene's stacks' config committed. */
interface Scene {
  emu: TestEmulator;
  /** The team's secrets, as every runner's environment has them. */
  env: Record<string, string>;
  /** A runner of its own (home, checkout, environment) on `stack`. */
  runner(stack: string): Promise<TestStack>;
  /** The instance ids `stack`'s state holds (Instances and fleet members). */
  held(runner: TestStack): Promise<number[]>;
  live(): number[];
  /** Ends the scene: its account, and every runner's home and checkout. */
  close(): Promise<void>;
}

/** A fresh account and repository for a scene whose stacks are made with `configs` (stack → plain config). */
async function scene(name: string, configs: Record<string, Record<string, string>>, options: { contention?: number } = {}): Promise<Scene> {
  const { pg, program, scratch, passphraseFile } = await shared;
  const emu = await emulator({ clock: new Clock("running"), lifecycle: QUICK_BOOTS, offers: 1000, contention: options.contention ?? 0 });
  const env = { PULUMI_BACKEND_URL: pg.url, PULUMI_CONFIG_PASSPHRASE_FILE: passphraseFile, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey };
  const repo = checkoutOf(program.dir, path.join(scratch, name));
  // Whoever set the stacks up committed their config files (with the passphrase's salt) to the repository.
  await Promise.all(
    Object.entries(configs).map(async ([stack, config]) => {
      const maintainer = new TestStack(stack, env, repo);
      await maintainer.init(config, {});
      // The stack lives in the shared backend, its config file in the repository: only the maintainer's home goes.
      fs.rmSync(maintainer.ws.stateDir, { recursive: true, force: true });
    }),
  );
  const runners: TestStack[] = [];
  return {
    emu,
    env,
    async runner(stack) {
      const runner = new TestStack(stack, env, checkoutOf(repo, path.join(scratch, `${name}-runner-${runners.length + 1}`)));
      runners.push(runner);
      return runner;
    },
    async held(runner) {
      return stackHoldings(await runner.ok("stack", "export")).instances.sort(byNumber);
    },
    live: () => emu.marketplace.instances.all().map((i) => i.id).sort(byNumber),
    async close() {
      await emu.close();
      for (const runner of runners) fs.rmSync(runner.ws.stateDir, { recursive: true, force: true });
    },
  };
}

/**
 * A checkout of `from` at `to`: its files (the program, the stacks' config) copied, its installed packages shared
 * (a link to its node_modules: what `npm ci` would make again, file for file).
 */
function checkoutOf(from: string, to: string): string {
  fs.mkdirSync(to);
  for (const entry of fs.readdirSync(from)) {
    if (entry === "node_modules") fs.symlinkSync(fs.realpathSync(path.join(from, entry)), path.join(to, entry));
    else if (fs.statSync(path.join(from, entry)).isFile()) fs.copyFileSync(path.join(from, entry), path.join(to, entry));
  }
  return to;
}

const byNumber = (a: number, b: number) => a - b;

/**
 * `gpu-rental <args>` as a runner runs it (`npx gpu-rental`): the packed package installed in its checkout, with
 * its environment (the toolchain first on PATH).
 */
async function gpuRental(runner: TestStack, args: string[]): Promise<{ code: number; output: string }> {
  const cli = path.join(runner.ws.projectDir, "node_modules", ".bin", "gpu-rental");
  const result = await run(cli, args, { cwd: runner.ws.projectDir, env: pulumiEnv(runner.ws), maxBuffer: 64 << 20 }).catch((error) => error);
  return { code: typeof result.code === "number" ? result.code : 0, output: `${result.stdout}${result.stderr}` };
}

/** Waits for what other processes are doing (a deploy's rentals) to show in the account. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited 120 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("4 runners deploy 4 stacks of one project at once, on one account, the market contended", () => {
  it("each stack ends with exactly its 16 instances, none in another's state, no offer rented twice; each destroys, leaving nothing", async () => {
    const stacks = ["pr-101", "pr-102", "pr-103", "main"];
    const team = await scene("side", Object.fromEntries(stacks.map((stack) => [stack, {}])), { contention: 0.3 });
    try {
      const runners = await Promise.all(stacks.map((stack) => team.runner(stack)));
      await Promise.all(runners.map((runner) => runner.ok("up", "--yes", "--parallel", "32")));
      const held = await Promise.all(runners.map((runner) => team.held(runner)));
      expect(held.map((ids) => ids.length)).toEqual([16, 16, 16, 16]);
      const all = held.flat().sort(byNumber);
      expect(new Set(all).size).toBe(64);
      expect(all).toEqual(team.live());
      // Each stack's Instances carry its name; the market took offers from under the rentals, which rented others.
      for (const [i, stack] of stacks.entries()) {
        const labels = team.emu.marketplace.instances.all().filter((instance) => held[i].includes(instance.id) && /-worker-/.test(instance.label)).map((instance) => instance.label);
        expect(labels.sort()).toEqual(Array.from({ length: 8 }, (_, n) => `${stack}-worker-${n}`).sort());
      }
      expect(new Set(team.emu.marketplace.instances.all().map((instance) => instance.offer.id)).size).toBe(64);
      expect(team.emu.marketplace.stats.offersLostToContention).toBeGreaterThan(0);
      await Promise.all(runners.map((runner) => runner.ok("destroy", "--yes")));
      expect(team.live()).toEqual([]);
    } finally {
      await team.close();
    }
  }, 300_000);
});

describe("runners on one stack, and runners that die", () => {
  it.concurrent("the same stack from two runners: the second is refused by the lock in one line saying what to do, rents nothing; after the first, its up changes nothing", async () => {
    const team = await scene("same", { shared: { count: "2", fleet: "2" } });
    try {
      const [first, second] = [await team.runner("shared"), await team.runner("shared")];
      team.emu.marketplace.lifecycle = SLOW_BOOTS;
      const firstUp = first.run("up", "--yes");
      await until(() => team.live().length === 4, "the first runner's 4 rentals");
      const refused = await gpuRental(second, ["up", "--stack", "shared"]);
      expect(refused.code).toBe(1);
      expect(refused.output).toMatch(
        /gpu-rental up: stack shared is being updated by another run \(\S+@\S+, pid \d+, since \S+\), so the backend refused this one and nothing was changed: wait for that run to end .*`pulumi cancel --yes --stack shared`/,
      );
      expect(team.live()).toHaveLength(4);
      team.emu.marketplace.lifecycle = QUICK_BOOTS;
      const done = await firstUp;
      expect({ code: done.code, output: done.code === 0 || done.stdout + done.stderr }).toEqual({ code: 0, output: true });
      await second.ok("up", "--yes", "--expect-no-changes");
      expect(await team.held(second)).toEqual(team.live());
      await second.ok("destroy", "--yes");
      expect(team.live()).toEqual([]);
    } finally {
      await team.close();
    }
  }, 300_000);

  it.concurrent("a runner killed mid-creation: another, with only the shared state, cancels and ups to exactly the declared instances; a third's sweep --stack touches no other stack's; the nightly drift check beside the deploy flags nothing", async () => {
    const team = await scene("killed", { staging: { count: "2", fleet: "2" }, deploy: { count: "4", fleet: "4" } });
    try {
      const nightly = await team.runner("staging");
      await nightly.ok("up", "--yes");
      const others = await team.held(nightly);
      expect(others).toHaveLength(4);

      team.emu.marketplace.lifecycle = SLOW_BOOTS;
      const [killed, drift] = [await team.runner("deploy"), await team.runner("staging")];
      // The drift check starts once the deploy rents, and the runner is killed once it has rented everything and the
      // drift check has answered.
      let drifted: ReturnType<TestStack["run"]> | undefined;
      let driftAnswered = false;
      const cut = await runCutOff(killed, ["up", "--yes"], "SIGKILL", () => {
        if (team.live().length > others.length) drifted ??= drift.run("refresh", "--preview-only", "--skip-preview=false", "--expect-no-changes").finally(() => (driftAnswered = true));
        return driftAnswered && team.live().length === others.length + 8;
      });
      expect(cut.signalled).toBe(true);
      const driftCheck = await drifted!;
      expect({ code: driftCheck.code, output: driftCheck.code === 0 || driftCheck.stdout + driftCheck.stderr }).toEqual({ code: 0, output: true });
      const rented = team.live().filter((id) => !others.includes(id));

      // A third runner's sweep of the killed deploy's stack finds exactly what it rented, nothing of the other stack's.
      const sweeper = await team.runner("deploy");
      const dry = await gpuRental(sweeper, ["sweep", "--stack", "deploy", "--dry-run"]);
      expect([...dry.output.matchAll(/would destroy: instance (\d+)/g)].map(([, id]) => Number(id)).sort(byNumber)).toEqual(rented);

      // The next runner has the shared state only: it releases the killed run's lock and ups, taking over every rental.
      const next = await team.runner("deploy");
      team.emu.marketplace.lifecycle = QUICK_BOOTS;
      await next.ok("cancel", "--yes");
      await next.ok("up", "--yes");
      expect(await team.held(next)).toEqual(rented);
      expect(team.live()).toEqual([...others, ...rented].sort(byNumber));
      expect((await gpuRental(sweeper, ["sweep", "--stack", "deploy"])).output).toMatch(/sweep: nothing found/);
      expect((await gpuRental(sweeper, ["sweep", "--stack", "staging"])).output).toMatch(/sweep: nothing found/);
      expect(team.live()).toEqual([...others, ...rented].sort(byNumber));

      await Promise.all([next.ok("destroy", "--yes"), nightly.ok("destroy", "--yes")]);
      expect(team.live()).toEqual([]);
    } finally {
      await team.close();
    }
  }, 300_000);
});

describe("gpu-rental test --backend: a team's CI test on the backend it deploys with", () => {
  it("passes with its throwaway stack in the shared backend and removes it; an unreachable backend, or one without the SSL its URL asks, is said in one line naming what to change, nothing deployed", async () => {
    const { pg, program, scratch } = await shared;
    const checkout = checkoutOf(program.dir, path.join(scratch, "ci-test"));
    // The team's CI runs the package it installed (npx gpu-rental).
    const cli = path.join(checkout, "node_modules", ".bin", "gpu-rental");
    const test = (backend: string) =>
      run(cli, ["test", checkout, "--backend", backend, "--config", "count=1", "--config", "fleet=1"], { maxBuffer: 64 << 20 }).catch((error) => error);
    // Watched in the backend's own table while it runs (a key per stack file, per update in its history).
    const seen = new Set<string>();
    const look = () => pg.query("SELECT key FROM pulumi_state WHERE key LIKE '%test-%'").then((keys) => keys.forEach((key) => seen.add(key)), () => undefined);
    const watch = setInterval(look, 200);
    const passed = await test(pg.url).finally(() => clearInterval(watch));
    expect({ code: passed.code ?? 0, output: passed.stdout }).toEqual({ code: 0, output: expect.stringMatching(/gpu-rental test: (\d+) of \1 steps passed/) });
    const stack = /stack (test-[0-9a-f]{12})/.exec(passed.stdout)![1];
    expect(passed.stdout).toMatch(new RegExp(`backend postgres://gpurental@127\\.0\\.0\\.1:${pg.port}/postgres`));
    expect({ seen: [...seen].filter((key) => /\/stacks\//.test(key) && key.endsWith(`/${stack}.json`)).length > 0, keys: [...seen] }).toMatchObject({ seen: true });
    // Gone from the backend afterwards. (Read in the table: `pulumi stack ls` of Pulumi 3.248's PostgreSQL backend
    // can hang once it holds many stacks.)
    expect(await pg.query(`SELECT key FROM pulumi_state WHERE key LIKE '%/stacks/%/${stack}.json'`)).toEqual([]);

    const unreachable = await test("postgres://gpurental@127.0.0.1:1/postgres?sslmode=disable");
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toMatch(
      /FAIL set up: the state backend postgres:\/\/gpurental@127\.0\.0\.1:1\/postgres\?sslmode=disable cannot be reached \(dial tcp 127\.0\.0\.1:1: connect: connection refused\), so nothing was deployed: check the URL/,
    );
    expect(unreachable.stdout).not.toMatch(/^\s*pulumi /m);

    // docs/team.md's URL asks for SSL, which this server (as any local one) does not offer: said, naming sslmode.
    const ssl = await test(pg.url.replace("sslmode=disable", "sslmode=require"));
    expect(ssl.code).toBe(1);
    expect(ssl.stdout).toMatch(/FAIL set up: the state backend postgres:\/\/\S+sslmode=require refused the connection's SSL \(.*SSL is not enabled on the server\), so nothing was deployed: .*\(sslmode=require\).*use sslmode=disable/);
    expect(ssl.stdout).not.toMatch(/run again/);
  }, 300_000);
});

/** `pulumi <args>` in a runner's checkout, as it is (no --stack): its stdout. */
async function runPulumiIn(runner: TestStack, args: string[]): Promise<string> {
  const { stdout } = await run(path.join(runner.ws.toolchain.bin, "pulumi"), [...args, "--non-interactive"], { cwd: runner.ws.projectDir, env: pulumiEnv(runner.ws) });
  return stdout;
}
