import { deployedProgram } from "./own-program";

/**
 * Many rentals in one `pulumi up`: the engine creates the instances of a program at once, in one provider
 * process, all with the same criteria. They must never reach for each other's offers, and each attempt shows in
 * the engine's log.
 */
const PROGRAM = `import { Instance } from "gpu-rental/provider";

export const ids = Array.from({ length: 32 }, (_, i) =>
  new Instance(\`worker-\${i}\`, { gpuCount: 1, image: "pytorch/pytorch", label: \`worker-\${i}\` }).instanceId,
);
`;

describe("32 instances of the same criteria in one pulumi up", () => {
  const ctx = deployedProgram("many", PROGRAM, { offers: 800, contention: 0.25 });

  it("rents 32 distinct offers without one collision, showing every attempt in the log", async () => {
    const out = await ctx.stack.ok("up", "--yes", "--parallel", "32");
    expect(out).toMatch(/\+ 33 created/);
    const instances = ctx.emu.marketplace.instances.all();
    expect(instances).toHaveLength(32);
    expect(new Set(instances.map((i) => i.offer.id)).size).toBe(32);
    const { offersUnavailable, offersLostToContention } = ctx.emu.marketplace.stats;
    expect(offersLostToContention).toBeGreaterThan(0);
    expect(offersUnavailable - offersLostToContention).toBe(0);
    expect(out).toMatch(/offer \d+: vanished/);
    expect(out).toMatch(/offer \d+: rented after \d+\.\d s/);
  }, 600_000);

  it("destroy leaves nothing", async () => {
    await ctx.stack.ok("destroy", "--yes");
    expect(ctx.emu.marketplace.instances.all()).toEqual([]);
  }, 300_000);
});
