import * as fs from "node:fs";
import * as path from "node:path";
import { Clock, ed25519KeyPair, holdingsOf } from "../../emulator";
import { DEFAULT_ORDER, offerQuery } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";
import { DocMachine, loginWith, scriptAgainst, scriptOf, writeUserKeys } from "./doc-program";

/**
 * A YAML program set up literally as docs/yaml.md says (the package from the local registry, the plugin installed
 * by `npx gpu-rental plugin install`, then the package removed), then driven by the real engine against a real
 * emulator: the docs' `up` (an SshKey, the trainer logged into over the emulator's SSH with it and with a key
 * attached by `sshKeys`, `fn::invoke` of getOffers answering what the SDK's search answers), bad input refused at
 * preview, an `up` that must change nothing, a label change and the attached key's removal made in place (that key
 * then refused), refresh, `pulumi import` of an SSH key made by hand, destroy, nothing left behind, and the API
 * keys nowhere in plaintext.
 */
describe("a YAML program, as docs/yaml.md sets it up", () => {
  let emu: TestEmulator;
  let machine: DocMachine;
  const dir = "gpu-yaml";
  const user = () => emu.marketplace.seededUser.id;
  // The user's key and a CI runner's, as the docs' Deploy reads them from ~/.ssh.
  const keys = { mine: ed25519KeyPair("me@laptop"), ci: ed25519KeyPair("ci-runner") };

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 }, ssh: true });
    machine = await DocMachine.start("yaml-docs");
    writeUserKeys(machine, { id_ed25519: keys.mine, ci_ed25519: keys.ci });
    const setUp = scriptOf("yaml.md", ["Set up"]);
    expect(setUp).toMatch(/npx gpu-rental plugin install/);
    await machine.ok(setUp);
    // The installed plugin needs nothing of the folder the command ran from: its package is gone before the deploy.
    await machine.ok("rm -rf node_modules package.json package-lock.json", dir);
    const deploy = scriptAgainst(emu, "yaml.md", ["Deploy"]);
    expect(await machine.ok(deploy, dir)).toMatch(/\+ 5 created/);
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
    expect(held.sshKeys).toHaveLength(1);
    const [instance] = emu.marketplace.instances.all();
    expect(instance.label).toBe("trainer");
  });

  it("lets both the account's key and the key attached by sshKeys log into the trainer; fn::invoke of getOffers answers what the SDK's search answers", async () => {
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    for (const key of [keys.mine, keys.ci]) expect(await loginWith(emu, ssh, key.private)).toMatch(/^logged in to \d+$/);

    const offers = JSON.parse(await machine.ok("pulumi stack output h100Offers --json", dir)) as { id: number }[];
    const searched = await emu.client().offers.search(
      offerQuery({ filters: { gpu_name: { eq: "H100 SXM" }, reliability: { gte: 0.9 } }, order: DEFAULT_ORDER, candidatesPerSearch: 3 }),
    );
    expect(searched).toHaveLength(3);
    expect(offers.map((o) => o.id)).toEqual(searched.map((o) => o.id));
    expect(offers[0]).toMatchObject({ gpuName: "H100 SXM", pricePerHour: searched[0].dph_total });
  });

  it("refuses at preview, naming the input, an SSH key that is not one, an unknown filter operator and a negative limit; nothing is created", async () => {
    const before = holdingsOf(emu.marketplace, user());
    // Each a program of its own, previewed side by side against the same emulator.
    const preview = async (name: string, body: string) => {
      fs.mkdirSync(path.join(machine.home, name));
      fs.writeFileSync(path.join(machine.home, name, "Pulumi.yaml"), `name: ${name}\nruntime: yaml\n${body}`);
      const run = await machine.run(`pulumi stack init bad >/dev/null && GPU_RENTAL_API_URL=${emu.url} GPU_RENTAL_API_KEY=${emu.apiKey} pulumi preview`, name);
      return { ...run, name };
    };
    const runs = await Promise.all([
      preview("bad-key", `resources:
  login:
    type: gpu-rental:index:SshKey
    properties:
      publicKey: not-a-key me@laptop
`),
      preview("bad-operator", `resources:
  trainer:
    type: gpu-rental:index:Instance
    properties:
      image: pytorch/pytorch
      filters:
        gpu_ram:
          greater: 24000
`),
      preview("bad-limit", `variables:
  offers:
    fn::invoke:
      function: gpu-rental:index:getOffers
      arguments:
        limit: -1
`),
    ]);
    const byName = Object.fromEntries(runs.map((run) => [run.name, run]));
    for (const run of runs) expect(run.code).not.toBe(0);
    expect(byName["bad-key"].output).toMatch(/publicKey.*not an OpenSSH public key/);
    expect(byName["bad-operator"].output).toMatch(/filters\.gpu_ram.*greater/);
    expect(byName["bad-limit"].output).toMatch(/limit.*from 1 to 1000/);
    expect(holdingsOf(emu.marketplace, user())).toEqual(before);
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

  it("changes nothing on a second up, changes the label and detaches the CI key in place, refreshes, adopts an SSH key by import, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    // A new label and the CI key detached: one update of the trainer in place; the CI key then logs in no more.
    const [before] = emu.marketplace.instances.all();
    const update = await machine.ok("pulumi config set label renamed && pulumi config rm trainerSshKeys && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    const [after] = emu.marketplace.instances.all();
    expect(after.id).toBe(before.id);
    expect(after.label).toBe("renamed");
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    await expect(loginWith(emu, ssh, keys.ci.private)).rejects.toThrow(/authentication methods failed/);
    expect(await loginWith(emu, ssh, keys.mine.private)).toBe(`logged in to ${after.id}`);

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    // A key registered by hand (a script, the console): the docs' import, with its id, then no changes.
    const laptop = await emu.client().sshKeys.add(ed25519KeyPair("me@other-laptop").public);
    const adopted = await machine.ok(scriptOf("yaml.md", ["Adopt what was made elsewhere"]).replaceAll("4343", String(laptop.id)), dir);
    expect(adopted).toMatch(/= 1 imported/);
    expect(adopted).toMatch(/6 unchanged/);
    expect(await machine.ok("cat Pulumi.yaml", dir)).toMatch(/^ {2}laptop:\n {4}type: gpu-rental:(index:)?SshKey$/m);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 6 deleted/);
    expect(holdingsOf(emu.marketplace, user())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
  }, 600_000);
});
