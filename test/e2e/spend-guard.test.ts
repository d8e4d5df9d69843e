import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { HOURS_PER_MONTH } from "../../emulator/domain/catalogue";
import { runPulumi } from "../../cli/pulumi";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT, scratch } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";
import { stepMachines } from "../ssh/machines";

const LIFETIME_S = 15;

/** Two instances with a lifetime, declared in a program of its own (inside the repository's ignored .gpu-rental/). */
const PROGRAM = `
const { Instance } = require("gpu-rental/provider");
const common = { image: "ubuntu:22.04", runtype: "ssh_direct", disk: 40, maxLifetime: "${LIFETIME_S}s" };
const ends = new Instance("ends", { ...common, onstart: "echo mine > mine.txt" });
const stops = new Instance("stops", { ...common, onLifetimeEnd: "stop" });
exports.ends = ends.instanceId;
exports.stops = stops.instanceId;
exports.lifetime = ends.lifetimeInEffect;
`;

/** A JavaScript program of its own (inside the repository's ignored .gpu-rental/), on a stack against `emu`. */
function programStack(name: string, index: string, emu: TestEmulator): Promise<{ stack: TestStack; projectDir: string }> {
  return projectStack(name, { "Pulumi.yaml": `name: gpu-rental-e2e-${name}\nruntime: nodejs\nmain: index.js\n`, "index.js": index }, emu);
}

/** A project of these files (inside the repository's ignored .gpu-rental/), on a stack against `emu`. */
async function projectStack(name: string, files: Record<string, string>, emu: TestEmulator): Promise<{ stack: TestStack; projectDir: string }> {
  const parent = path.join(REPO_ROOT, ".gpu-rental");
  fs.mkdirSync(parent, { recursive: true });
  const projectDir = fs.mkdtempSync(path.join(parent, `e2e-${name}-`));
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(projectDir, file), text);
  const stack = new TestStack(`${name}-${process.pid}`, {}, projectDir);
  await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
  return { stack, projectDir };
}

/**
 * Acceptance of maxLifetime through the real engine: `pulumi up` returns (program, provider host and engine
 * exit), then the instances end themselves with only the emulator left; refresh sees it. The emulator's clock is
 * frozen and moved by the test; the machines' `date` and `sleep` follow it, so the lifetime is exact.
 */
describe("maxLifetime through pulumi up", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let projectDir: string;
  let work: ReturnType<typeof scratch>;

  beforeAll(async () => {
    work = scratch("e2e-lifetime");
    emu = await emulator({
      clock: new Clock("frozen"),
      lifecycle: { provisioningMs: 0, loadingMs: 0 },
      ssh: { sandboxes: path.join(work.dir, "machines"), hostKeyFile: path.join(work.dir, "host", "key") },
    });
    ({ stack, projectDir } = await programStack("lifetime", PROGRAM, emu));
  }, 120_000);

  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
    work?.remove();
  }, 120_000);

  const record = (id: number) => emu.marketplace.instances.all().find((i) => i.id === id);
  const charge = async (id: number) =>
    ((await http(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as any[]).find((r) => r.metadata.instance_id === id);
  const until = async (done: () => boolean | Promise<boolean>, ms: number, what: string) => {
    const started = Date.now();
    for (let polls = 0; Date.now() - started < ms && polls < 10_000; polls++) {
      if (await done()) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${what}: not after ${ms} ms`);
  };

  it("ends (destroy and stop) after the engine is gone, billed for its lifetime exactly; refresh drops the destroyed one", async () => {
    await stack.ok("up", "--yes");
    const upReturned = emu.marketplace.clock.now() / 1000;
    const outputs = await stack.outputs();
    expect(outputs.lifetime).toBe(`maxLifetime ${LIFETIME_S}s, then destroy`);
    const storage = (id: number) => ((record(id)!.offer.storage_cost ?? 0) * 40) / HOURS_PER_MONTH;
    const rates = { compute: record(outputs.ends)!.pricePerHour, storage: storage(outputs.ends) };
    const stopsStorage = storage(outputs.stops);
    // The user's onstart ran as written beside the watchdog.
    const machine = (await http(emu.url, "GET", `/_emulator/instances/${outputs.ends}/machine`)).body;
    expect(fs.readFileSync(path.join(machine.sandbox, "mine.txt"), "utf8")).toBe("mine\n");
    expect(record(outputs.ends)).toBeDefined();

    // A second before the end of their lifetime both still run; the next second ends it.
    await stepMachines(emu, [outputs.ends, outputs.stops], (LIFETIME_S - 1) * 1000);
    expect([record(outputs.ends)?.intended, record(outputs.stops)?.intended]).toEqual(["running", "running"]);
    await stepMachines(emu, [outputs.ends, outputs.stops], 1000);
    await until(() => record(outputs.ends) === undefined, 30_000, "the instance destroyed itself");
    const row = await charge(outputs.ends);
    expect(row.end).toBeGreaterThan(upReturned);
    expect(row.end - row.start).toBe(LIFETIME_S);
    expect(row.amount).toBeCloseTo((LIFETIME_S / 3600) * (rates.compute + rates.storage), 6);

    await until(async () => record(outputs.stops)?.intended === "stopped", 30_000, "the other instance stopped itself");
    const before = (await charge(outputs.stops)).amount;
    emu.marketplace.clock.advance(3_600_000);
    const after = (await charge(outputs.stops)).amount;
    expect(Math.round((after - before) * 10_000)).toBe(Math.round(stopsStorage * 10_000));

    await stack.ok("refresh", "--yes");
    const resources = JSON.parse(await stack.ok("stack", "export")).deployment.resources.filter((r: any) => r.type.endsWith(":Instance"));
    expect(resources.map((r: any) => [r.urn.split("::").pop(), r.outputs.targetState])).toEqual([["stops", "stopped"]]);
  }, 400_000);
});

/** A cap no offer of the market fits under: the second account's, on its explicit provider. */
const TEAM_CAP = 0.001;

/**
 * The same instance in a YAML program, on the provider plugin of this repository (plugin/, on its dist/); and one
 * of a second account, through an explicit provider with a cap of its own (its URL and key from stack config).
 */
const PLUGIN_PROGRAM = `name: gpu-rental-e2e-cap-plugin
runtime: yaml
plugins:
  providers:
    - name: gpu-rental
      path: ${path.join(REPO_ROOT, "plugin")}
config:
  teamUrl:
    type: string
  teamKey:
    type: string
resources:
  capped:
    type: gpu-rental:index:Instance
    properties: { image: "ubuntu:22.04", runtype: args }
  team:
    type: pulumi:providers:gpu-rental
    properties:
      apiUrl: \${teamUrl}
      apiKey: \${teamKey}
      maxHourlySpend: ${TEAM_CAP}
  team-capped:
    type: gpu-rental:index:Instance
    properties: { image: "ubuntu:22.04", runtype: args }
    options:
      provider: \${team}
`;

/**
 * The stack's gpu-rental:maxHourlySpend through the real engine: preview warns (and succeeds), up refuses with
 * nothing rented, then under a higher cap up deploys with no warning. A second account's explicit provider (the
 * plugin's) takes a cap of its own, which refuses its rental.
 */
describe("gpu-rental:maxHourlySpend through pulumi up", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let projectDir: string;
  let plugin: { stack: TestStack; projectDir: string };
  let team: { id: number; key: string };

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 0, loadingMs: 0 } });
    const capped = 'const { Instance } = require("gpu-rental/provider");\nexports.id = new Instance("capped", { image: "ubuntu:22.04", runtype: "args" }).instanceId;\n';
    ({ stack, projectDir } = await programStack("cap", capped, emu));
    plugin = await projectStack("cap-plugin", { "Pulumi.yaml": PLUGIN_PROGRAM }, emu);
    team = emu.account("team@cap.test");
    await plugin.stack.ok("config", "set", "teamUrl", emu.url);
    const secret = await runPulumi(plugin.stack.ws, ["config", "set", "--secret", "teamKey", "--stack", plugin.stack.name], { input: team.key });
    if (secret.code !== 0) throw new Error(secret.stderr);
  }, 120_000);

  afterAll(async () => {
    await stack?.dispose();
    await plugin?.stack.remove();
    await emu?.close();
    for (const dir of [projectDir, plugin?.projectDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("preview warns of the rental that would cross the cap (both shells); up refuses it, naming what counts, nothing rented (a second account's too, under its own cap); under the cap it deploys", async () => {
    const client = emu.client();
    const other = await client.instances.create((await client.offers.search({ order: [["dph_total", "asc"]], limit: 1 }))[0].id, { image: "x", label: "other-stack" });
    const [cheapest] = (await client.offers.search({ order: [["dph_total", "asc"]], limit: 1 })).map((o) => o.dph_total);
    const paying = (await client.instances.get(other.new_contract))!.dph_total!;
    const cap = String(paying + cheapest / 2);
    await stack.ok("config", "set", "gpu-rental:maxHourlySpend", cap);
    await plugin.stack.ok("config", "set", "gpu-rental:maxHourlySpend", cap);
    const warning = `warning: gpu-rental Instance: Renting this instance would take the account over maxHourlySpend \\$${escaped(cap)}/h: ` +
      `it pays [^\\n]* for ${other.new_contract} "other-stack" running [^\\n]*\`pulumi up\` will refuse it`;
    const previewed = await stack.run("preview");
    expect(previewed.code).toBe(0);
    // The dynamic provider's check has no URN: the warning is the stack's.
    expect(previewed.stdout).toMatch(new RegExp(`pulumi:pulumi:Stack \\([^)]*\\):\\s+${warning}`));
    const pluginPreviewed = await plugin.stack.run("preview");
    expect(pluginPreviewed.code).toBe(0);
    expect(pluginPreviewed.stdout).toMatch(new RegExp(`gpu-rental:index:Instance \\(capped\\):\\s+${warning}`));
    expect(emu.marketplace.instances.all()).toHaveLength(1);
    // The second account's explicit provider holds its own cap: its account pays nothing, and no offer fits under it.
    const teamRefused = await plugin.stack.run("up", "--yes");
    expect(teamRefused.code).not.toBe(0);
    expect(teamRefused.stdout + teamRefused.stderr).toMatch(new RegExp(`team-capped[\\s\\S]*over maxHourlySpend \\$${escaped(String(TEAM_CAP))}/h: it pays \\$0/h now`));
    expect(emu.marketplace.instances.all().filter((i) => i.ownerId === team.id)).toEqual([]);
    expect(emu.marketplace.instances.all()).toHaveLength(1);

    const refused = await stack.run("up", "--yes");
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(new RegExp(`over maxHourlySpend[\\s\\S]*${other.new_contract} "other-stack" running[^\\n]*Nothing was rented`));
    expect(emu.marketplace.instances.all()).toHaveLength(1);
    await stack.ok("config", "set", "gpu-rental:maxHourlySpend", String(paying + cheapest * 2));
    const deployed = await stack.run("up", "--yes");
    expect(deployed.code).toBe(0);
    expect(deployed.stdout + deployed.stderr).not.toMatch(/maxHourlySpend/);
    expect(emu.marketplace.instances.all()).toHaveLength(2);
  }, 300_000);
});

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
