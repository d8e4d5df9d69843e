import { deployedProgram } from "./own-program";

/** A GpuFleet in a user's program, through the real engine: resizing adds or removes instances at the end only. */
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { GpuFleet, Template } from "gpu-rental/provider";

const config = new pulumi.Config();
const base = new Template("base", { name: "fleet-base", image: "nvidia/cuda", runtype: "ssh", sshDirect: true, useSsh: true });
const fleet = new GpuFleet("workers", { size: config.requireNumber("size"), templateHashId: base.hashId, gpuCount: 1 });

export const instanceIds = fleet.instanceIds;
export const sshEndpoints = fleet.sshEndpoints;
`;

describe("GpuFleet through the real engine, from the packed package", () => {
  const ctx = deployedProgram("fleet", PROGRAM, {}, { size: "3" });
  const held = () => ctx.emu.marketplace.instances.all().map((i) => [i.id, i.label]).sort(([, a], [, b]) => String(a).localeCompare(String(b)));

  let first: number[];

  it("rents the fleet, its ssh endpoints as outputs", async () => {
    expect(await ctx.stack.ok("up", "--yes")).toMatch(/\+ 6 created/);
    const outputs = await ctx.stack.outputs();
    first = outputs.instanceIds as number[];
    expect(held()).toEqual(first.map((id, i) => [id, `workers-${i}`]));
    expect(outputs.sshEndpoints).toEqual(
      first.map((instanceId) => ({ instanceId, host: expect.stringMatching(/^[\d.]+$/), port: expect.any(Number) })),
    );
  }, 300_000);

  it("growing adds instances at the end and leaves the others alone", async () => {
    await ctx.stack.ok("config", "set", "size", "5");
    const out = await ctx.stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 2 created/);
    expect(out).toMatch(/6 unchanged/); // the stack, the template, the fleet and its first 3 instances
    const ids = (await ctx.stack.outputs()).instanceIds as number[];
    expect(ids.slice(0, 3)).toEqual(first);
    expect(held()).toHaveLength(5);
  }, 300_000);

  it("shrinking removes the last instances only", async () => {
    await ctx.stack.ok("config", "set", "size", "2");
    const out = await ctx.stack.ok("up", "--yes");
    expect(out).toMatch(/- 3 deleted/);
    expect(held()).toEqual(first.slice(0, 2).map((id, i) => [id, `workers-${i}`]));
  }, 300_000);

  it("refuses a size that is not a whole number, creating nothing", async () => {
    await ctx.stack.ok("config", "set", "size", "1.5");
    const result = await ctx.stack.run("up", "--yes");
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/GpuFleet workers: size must be a whole number from 0 to 1000/);
    expect(held()).toHaveLength(2);
  }, 300_000);

  it("destroy leaves nothing", async () => {
    await ctx.stack.ok("destroy", "--yes");
    expect(held()).toEqual([]);
  }, 300_000);
});
