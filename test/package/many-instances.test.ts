import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { KEPT_OFFER_FIELDS } from "../../provider/lifecycle/rented-offer";
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

/**
 * Loaded first in every Node.js process of the run (NODE_OPTIONS): it notes each provider module the dynamic-provider
 * host loads, which it compiles from its text with require-from-string (a module of no file name).
 */
const LOADS = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-provider-loads-"));
const COUNTER = `const Module = require("node:module");
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  if (filename === "" && content.includes("exports.handler")) require("node:fs").appendFileSync(${JSON.stringify(path.join(LOADS, "loads"))}, content.length + "\\n");
  return compile.apply(this, arguments);
};
`;
fs.writeFileSync(path.join(LOADS, "count.js"), COUNTER);
afterAll(() => fs.rmSync(LOADS, { recursive: true, force: true }));

describe("32 instances of the same criteria in one pulumi up", () => {
  const env = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${path.join(LOADS, "count.js")}`.trim() };
  const ctx = deployedProgram("many", PROGRAM, { offers: 800, contention: 0.25 }, {}, env);

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

  it("stores one small provider module for all 32, which the provider host loaded once", async () => {
    const { deployment } = JSON.parse(await ctx.stack.ok("stack", "export"));
    const instances = deployment.resources.filter((r: any) => r.type === "pulumi-nodejs:dynamic/gpu-rental:Instance");
    expect(instances).toHaveLength(32);
    const providers = new Set(instances.flatMap((r: any) => [r.inputs.__provider, r.outputs.__provider]));
    expect(providers.size).toBe(1);
    const [text] = providers as Set<string>;
    expect(text.length).toBeLessThan(1_000);
    expect(fs.readFileSync(path.join(LOADS, "loads"), "utf8").split("\n").filter(Boolean)).toEqual([String(text.length)]);
  });

  it("keeps of each offer rented its id and the fields criteria compare, not the whole offer", async () => {
    const { deployment } = JSON.parse(await ctx.stack.ok("stack", "export"));
    const instances = deployment.resources.filter((r: any) => r.type === "pulumi-nodejs:dynamic/gpu-rental:Instance");
    expect(instances).toHaveLength(32);
    for (const { outputs } of instances) {
      expect(outputs.rentedOffer.id).toBe(outputs.rentedOfferId);
      expect(Object.keys(outputs.rentedOffer).sort()).toEqual([...KEPT_OFFER_FIELDS].sort());
      // What the state no longer keeps: the offer as the market showed it, of many more fields.
      const offer = ctx.emu.marketplace.instances.all().find((i) => i.id === outputs.instanceId)!.offer;
      expect(Object.keys(offer).length).toBeGreaterThan(3 * KEPT_OFFER_FIELDS.length);
    }
  });

  it("destroy leaves nothing", async () => {
    await ctx.stack.ok("destroy", "--yes");
    expect(ctx.emu.marketplace.instances.all()).toEqual([]);
  }, 300_000);
});
