import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { typescriptProgram } from "./own-program";

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
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), offers: 800, contention: 0.25, lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    program = await typescriptProgram("many", PROGRAM);
    stack = new TestStack(`many-${process.pid}`, {}, program.dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
  }, 300_000);

  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 180_000);

  it("rents 32 distinct offers without one collision, showing every attempt in the log", async () => {
    const out = await stack.ok("up", "--yes", "--parallel", "32");
    expect(out).toMatch(/\+ 33 created/);
    const instances = emu.marketplace.instances.all();
    expect(instances).toHaveLength(32);
    expect(new Set(instances.map((i) => i.offer.id)).size).toBe(32);
    const { offersUnavailable, offersLostToContention } = emu.marketplace.stats;
    expect(offersLostToContention).toBeGreaterThan(0);
    expect(offersUnavailable - offersLostToContention).toBe(0);
    expect(out).toMatch(/offer \d+: vanished/);
    expect(out).toMatch(/offer \d+: rented after \d+\.\d s/);
  }, 600_000);

  it("destroy leaves nothing", async () => {
    await stack.ok("destroy", "--yes");
    expect(emu.marketplace.instances.all()).toEqual([]);
  }, 300_000);
});
