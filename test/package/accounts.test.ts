import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";

/**
 * examples/two-accounts, installed from the packed package: one program, two accounts of the emulator (the
 * seeded user as the default account, a second user as the team's), each resource created under its own.
 */
describe("two accounts in one program", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  let teamUserId: number;
  let teamKey: string;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    ({ id: teamUserId, key: teamKey } = emu.account("team@accounts.test"));
    program = await UserProgram.fromExample("two-accounts");
  }, 300_000);
  afterAll(async () => {
    await emu.close();
    program.remove();
  });

  it("creates each resource under its own account, and keeps both keys out of state", async () => {
    const stack = new TestStack(`accounts-${process.pid}`, {}, program.dir);
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey, "gpu-rental:teamApiKey": teamKey });
      expect(await stack.ok("up", "--yes")).toMatch(/\+ 4 created/);
      const outputs = await stack.outputs();
      const owner = (id: number) => emu.marketplace.instances.all().find((i) => i.id === id)!.ownerId;
      expect(owner(outputs.sandboxId)).toBe(emu.marketplace.seededUser.id);
      expect(owner(outputs.teamTrainerId)).toBe(teamUserId);
      expect(emu.marketplace.volumes.list(teamUserId).map((v) => v.id)).toEqual([outputs.teamVolumeId]);
      expect(emu.marketplace.volumes.list(emu.marketplace.seededUser.id)).toEqual([]);
      expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/4 unchanged/);
      expect(await stack.ok("destroy", "--yes")).toMatch(/- 4 deleted/);
      expect(emu.marketplace.instances.all()).toEqual([]);
      expect(emu.marketplace.volumes.list(teamUserId)).toEqual([]);
      const everything = stack.stateText() + stack.transcript.join("\n");
      expect(everything).not.toContain(teamKey);
      expect(everything).not.toContain(emu.apiKey);
    } finally {
      await stack.dispose();
    }
  }, 300_000);

  it("stops before creating anything when an account's key is missing or in plaintext, and says how to set it", async () => {
    const stack = new TestStack(`accounts-bad-${process.pid}`, {}, program.dir);
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
      const missing = await stack.run("up", "--yes");
      expect(missing.code).not.toBe(0);
      expect(missing.stdout + missing.stderr).toMatch(/Account team: no API key in stack config gpu-rental:teamApiKey\. Set it with `pulumi config set --secret gpu-rental:teamApiKey <api key>`/);

      await stack.ok("config", "set", "gpu-rental:teamApiKey", teamKey);
      const plaintext = await stack.run("up", "--yes");
      expect(plaintext.code).not.toBe(0);
      expect(plaintext.stdout + plaintext.stderr).toMatch(/holds an API key in plaintext/);
      expect(emu.marketplace.instances.all()).toEqual([]);
    } finally {
      await stack.remove();
    }
  }, 300_000);
});
