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
    expect(holdingsOf(emu.marketplace, user())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)] });
  }, 600_000);

  /** Mistakes YAML lets through to the engine, each its own project: preview fails naming the input, nothing rented. */
  const MISTAKES: Record<string, { properties: string; fails: RegExp }> = {
    // Refused by the YAML host's own check of the program against the schema, before the provider sees it.
    "misspelt-input": { properties: "maxLifetme: 10m", fails: /Property maxLifetme does not exist on 'gpu-rental:index:Instance'/ },
    "misspelt-filter": { properties: "filters:\n        reliabilty:\n          gte: 0.99", fails: /filters\.reliabilty: not a field the search filters on .*did you mean reliability\?/ },
    "operand-type": { properties: "filters:\n        reliability:\n          gte: high", fails: /filters\.reliability\.gte: reliability takes a number/ },
  };

  it("fails preview naming the input for a misspelt input, a misspelt filter and an operand of the wrong type, renting nothing", async () => {
    const previews = await Promise.all(
      Object.entries(MISTAKES).map(async ([name, { properties }]) => {
        const program = `name: yaml-${name}\nruntime: yaml\nresources:\n  worker:\n    type: gpu-rental:index:Instance\n    properties:\n      image: pytorch/pytorch\n      gpuModel: RTX 4090\n      ${properties}\n`;
        const folder = `mistake-${name}`;
        await machine.ok(`mkdir -p ${folder} && cat > ${folder}/Pulumi.yaml <<'END'\n${program}END`);
        await machine.ok(`pulumi stack init dev && pulumi config set gpu-rental:apiUrl ${emu.url} && pulumi config set --secret gpu-rental:apiKey ${emu.apiKey}`, folder);
        return [name, await machine.run("pulumi preview", folder)] as const;
      }),
    );
    for (const [name, run] of previews) expect({ name, ...run }).toEqual({ name, code: 1, output: expect.stringMatching(MISTAKES[name].fails) });
    expect(holdingsOf(emu.marketplace, user()).instances).toEqual([]);
  }, 300_000);
});
