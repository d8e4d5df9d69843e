import { Clock, holdingsOf } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { DocMachine, scriptAgainst, scriptOf } from "./doc-program";

/**
 * A YAML program set up literally as docs/yaml.md says (the package from the local registry, the plugin installed
 * by `npx gpu-rental plugin install`, then the package removed), then driven by the real engine against a real
 * emulator: the docs' `up`, an `up` that must change nothing, a label change made in place, refresh, destroy,
 * nothing left behind, and the API keys nowhere in plaintext.
 */
describe("a YAML program, as docs/yaml.md sets it up", () => {
  let emu: TestEmulator;
  let machine: DocMachine;
  const dir = "gpu-yaml";
  const user = () => emu.marketplace.seededUser.id;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    machine = await DocMachine.start("yaml-docs");
    const setUp = scriptOf("yaml.md", ["Set up"]);
    expect(setUp).toMatch(/npx gpu-rental plugin install/);
    await machine.ok(setUp);
    // The installed plugin needs nothing of the folder the command ran from: its package is gone before the deploy.
    await machine.ok("rm -rf node_modules package.json package-lock.json", dir);
    const deploy = scriptAgainst(emu, "yaml.md", ["Deploy"]);
    expect(await machine.ok(deploy, dir)).toMatch(/\+ 4 created/);
  }, 600_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
    await emu?.close();
  });

  it("created the template, the instance made from it and the API key in the account", () => {
    const held = holdingsOf(emu.marketplace, user());
    expect(held.instances).toHaveLength(1);
    expect(held.templates).toHaveLength(1);
    // The seeded key and the one the program made.
    expect(held.apiKeys).toHaveLength(2);
    const [instance] = emu.marketplace.instances.all();
    expect(instance.label).toBe("trainer");
  });

  it("keeps the account's key and the key the program made out of state and output", async () => {
    const made = await machine.secretOutput("ciKey", dir);
    expect(made).toMatch(/^\S{16,}$/);
    const state = machine.stateText(dir);
    expect(state).toMatch(/secure|ciphertext/);
    for (const secret of [emu.apiKey, made]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("changes nothing on a second up, changes the label in place, refreshes, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/4 unchanged/);

    const [before] = emu.marketplace.instances.all();
    const update = await machine.ok("pulumi config set label renamed && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    const [after] = emu.marketplace.instances.all();
    expect(after.id).toBe(before.id);
    expect(after.label).toBe("renamed");

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/4 unchanged/);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 4 deleted/);
    expect(holdingsOf(emu.marketplace, user())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
  }, 600_000);
});
