import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { packedRelease } from "../helpers/last-release";
import { TestStack } from "../helpers/pulumi-stack";
import { tarball, UserProgram } from "../helpers/user-program";
import { PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "./own-program";

/**
 * A GpuFleet in a user's program, through the real engine: first in the component form of the last release
 * (one Instance child per member), moved to the fleet that is one resource with nothing replaced; then, on that
 * form, a fleet of 64 at 50% contention, a failed member replaced alone, a resize from 64 to 32.
 */
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { GpuFleet } from "gpu-rental/provider";

const config = new pulumi.Config();
const adoptIds = config.getObject<number[]>("adoptIds");
const fleet = new GpuFleet("workers", { size: config.requireNumber("size"), image: "nvidia/cuda", gpuCount: 1, ...(adoptIds ? { adoptIds } : {}) });

export const instanceIds = fleet.instanceIds;
export const sshEndpoints = fleet.sshEndpoints;
`;

const release = packedRelease();
const describeWithRelease = "tarball" in release ? describe : describe.skip;
if ("skip" in release) console.warn(`GpuFleet migration and fleet tests skipped: ${release.skip}`);

describeWithRelease("GpuFleet through the real engine, from the packed package", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;
  const held = () => emu.marketplace.instances.all().map((i) => [i.id, i.label] as [number, string]).sort(([a], [b]) => a - b);
  const ids = async () => (await stack.outputs()).instanceIds as number[];

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), offers: 1000, lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    const files = { "Pulumi.yaml": PROJECT("fleet", true), "index.ts": PROGRAM, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };
    const old = (release as { tarball: string }).tarball;
    program = await UserProgram.create("fleet", files, [old, "@pulumi/pulumi@3.248.0"], TYPESCRIPT_PROGRAM.dev);
    stack = new TestStack(`fleet-${process.pid}`, {}, program.dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url, size: "3" }, { "gpu-rental:apiKey": emu.apiKey });
  }, 300_000);
  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 180_000);

  it("moves a component-form fleet of the last release to the new form with no instance replaced", async () => {
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 5 created/); // the stack, the component, 3 Instance children
    const before = held();
    expect(before.map(([, label]) => label).sort()).toEqual(["workers-0", "workers-1", "workers-2"]);
    const old = await ids();

    // The path of docs/fleets.md: the old resources leave the state (not the account), the new fleet adopts them.
    await stack.ok("state", "delete", "--target-dependents", `urn:pulumi:${stack.name}::fleet::gpu-rental:index:GpuFleet::workers`, "--yes");
    await program.npm("install", tarball());
    await stack.ok("config", "set-all", "--path", ...old.flatMap((id, i) => ["--plaintext", `adoptIds[${i}]=${id}`]));
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 1 created/);
    expect(out).not.toMatch(/deleted|replaced/);
    expect(await ids()).toEqual(old);
    expect(held()).toEqual(before);
  }, 420_000);

  let fleet: number[];

  it("grows to a fleet of 64 at 50% contention: all 64 rented, each offer tried by one member only", async () => {
    const migrated = await ids();
    await stack.ok("config", "set", "size", "64"); // adoptIds stays: read only at creation
    emu.marketplace.contention = 0.5;
    const { offersLostToContention: lost, offersUnavailable: refused } = emu.marketplace.stats;
    expect(await stack.ok("up", "--yes")).toMatch(/~ 1 updated/);
    emu.marketplace.contention = 0;
    fleet = await ids();
    expect(fleet).toHaveLength(64);
    expect(fleet.slice(0, 3)).toEqual(migrated);
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
