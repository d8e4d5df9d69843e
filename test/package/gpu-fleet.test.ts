import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { componentFleetBaseline, COMPONENT_FLEET_PROGRAM, COMPONENT_FLEET_PROJECT, COMPONENT_FLEET_STACK, usingRecordedPassphrase } from "../fixtures/component-fleet/baseline";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "./own-program";

/**
 * A GpuFleet in a user's program, through the real engine, from the packed package: a stack deployed by the last
 * release whose GpuFleet was a component (one Instance child per member), moved to the fleet that is one resource
 * with nothing replaced; a fleet of 3 grown to 64 at 50% contention, a failed member replaced alone, a resize from
 * 64 to 32, a size refused, destroy.
 */
const EMULATOR = { offers: 1000, lifecycle: { provisioningMs: 50, loadingMs: 100 } };
const FILES = { "Pulumi.yaml": PROJECT(COMPONENT_FLEET_PROJECT, true), "index.ts": COMPONENT_FLEET_PROGRAM, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };

/** Each instance the emulator holds, as [id, label], by id. */
const heldBy = (emu: TestEmulator) => emu.marketplace.instances.all().map((i) => [i.id, i.label] as [number, string]).sort(([a], [b]) => a - b);

/**
 * The baseline is a recorded state (test/fixtures/component-fleet, made by the component-form release), not that
 * release itself: any clone, shallow or not, runs it. The emulator (seeded as the recording's) holds what that deploy
 * rented: the recorded offers, rented again in the order of the instances' ids (it numbers rentals in order), with
 * their images and labels.
 */
describe("GpuFleet: a stack the component-form release deployed (recorded), moved to the new form", () => {
  const baseline = componentFleetBaseline();
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), ...EMULATOR });
    const client = emu.client();
    const byId = [...baseline.members].sort((a, b) => a.instanceId - b.instanceId);
    for (const member of byId) await client.instances.create(member.offerId, { image: member.image, label: member.label });
    program = await UserProgram.create(COMPONENT_FLEET_PROJECT, FILES, TYPESCRIPT_PROGRAM.packages, TYPESCRIPT_PROGRAM.dev);
    stack = usingRecordedPassphrase(new TestStack(COMPONENT_FLEET_STACK, {}, program.dir));
    await stack.init({ "gpu-rental:apiUrl": emu.url, size: String(baseline.members.length) }, { "gpu-rental:apiKey": emu.apiKey });
  }, 300_000);
  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 180_000);

  it("moves the recorded component-form fleet to the new form with no instance replaced", async () => {
    const before = heldBy(emu);
    expect(before).toEqual(baseline.members.map((m) => [m.instanceId, m.label] as [number, string]).sort(([a], [b]) => a - b));
    const file = path.join(stack.ws.stateDir, "recorded.json");
    fs.writeFileSync(file, JSON.stringify(baseline.deployment));
    await stack.ok("stack", "import", "--file", file);
    // The old form, as recorded: the component, and under it one dynamic Instance per member.
    const imported = JSON.parse(await stack.ok("stack", "export")).deployment.resources as { urn: string; type: string; parent?: string }[];
    expect(imported.filter((r) => r.parent === baseline.componentUrn).map((r) => r.type)).toEqual(baseline.members.map(() => "pulumi-nodejs:dynamic/gpu-rental:Instance"));
    const old = [...baseline.members].sort((a, b) => a.label.localeCompare(b.label)).map((m) => m.instanceId);
    expect((await stack.outputs()).instanceIds).toEqual(old);

    // The path of docs/fleets.md: the old resources leave the state (not the account), the new fleet adopts them.
    await stack.ok("state", "delete", "--target-dependents", baseline.componentUrn, "--yes");
    await stack.ok("config", "set-all", "--path", ...old.flatMap((id, i) => ["--plaintext", `adoptIds[${i}]=${id}`]));
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 1 created/);
    expect(out).not.toMatch(/deleted|replaced/);
    expect((await stack.outputs()).instanceIds).toEqual(old);
    expect(heldBy(emu)).toEqual(before);
  }, 420_000);
});

describe("GpuFleet through the real engine: 64 members under contention, a failed member replaced, shrink, destroy", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;
  const held = () => heldBy(emu);
  const ids = async () => (await stack.outputs()).instanceIds as number[];

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), ...EMULATOR });
    program = await UserProgram.create(COMPONENT_FLEET_PROJECT, FILES, TYPESCRIPT_PROGRAM.packages, TYPESCRIPT_PROGRAM.dev);
    stack = new TestStack(`fleet-${process.pid}`, {}, program.dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url, size: "3" }, { "gpu-rental:apiKey": emu.apiKey });
  }, 300_000);
  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 180_000);

  let fleet: number[];

  it("grows a fleet of 3 to 64 at 50% contention: all 64 rented, each offer tried by one member only", async () => {
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 2 created/); // the stack and the fleet
    const first = await ids();
    expect(held().map(([, label]) => label).sort()).toEqual(["workers-0", "workers-1", "workers-2"]);
    await stack.ok("config", "set", "size", "64");
    emu.marketplace.contention = 0.5;
    const { offersLostToContention: lost, offersUnavailable: refused } = emu.marketplace.stats;
    expect(await stack.ok("up", "--yes")).toMatch(/~ 1 updated/);
    emu.marketplace.contention = 0;
    fleet = await ids();
    expect(fleet).toHaveLength(64);
    expect(fleet.slice(0, 3)).toEqual(first);
    expect(held()).toEqual([...fleet].sort((a, b) => a - b).map((id) => [id, `workers-${fleet.indexOf(id)}`]));
    const lostNow = emu.marketplace.stats.offersLostToContention - lost;
    expect(lostNow).toBeGreaterThan(0);
    // Every refused acceptance was another tenant's (contention): no member reached for a sibling's offer.
    expect(emu.marketplace.stats.offersUnavailable - refused).toBe(lostNow);
  }, 300_000);

  it("replaces a member that failed, and only it, in one up", async () => {
    emu.marketplace.instances.fail(fleet[10], "exited", "injected");
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/~ 1 updated/);
    const now = await ids();
    expect(now.filter((id, i) => id !== fleet[i])).toEqual([now[10]]);
    expect(held().map(([id]) => id)).not.toContain(fleet[10]);
    fleet = now;
  }, 300_000);

  it("shrinking 64 to 32 destroys members 32-63 and changes nothing else; a second up shows no changes", async () => {
    await stack.ok("config", "set", "size", "32");
    expect(await stack.ok("up", "--yes")).toMatch(/~ 1 updated/);
    expect(await ids()).toEqual(fleet.slice(0, 32));
    expect(held()).toEqual(fleet.slice(0, 32).sort((a, b) => a - b).map((id) => [id, `workers-${fleet.indexOf(id)}`]));
    expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/2 unchanged/);
  }, 300_000);

  it("refuses a size that is not a whole number, changing nothing", async () => {
    await stack.ok("config", "set", "size", "1.5");
    const result = await stack.run("up", "--yes");
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/GpuFleet workers: size must be a whole number from 0 to 1000/);
    expect(held()).toHaveLength(32);
  }, 300_000);

  it("destroy leaves nothing", async () => {
    await stack.ok("destroy", "--yes");
    expect(held()).toEqual([]);
  }, 300_000);
});
