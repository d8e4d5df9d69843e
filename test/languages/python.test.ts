import { Clock, ed25519KeyPair, holdingsOf } from "../../emulator";
import { DEFAULT_ORDER, offerQuery } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";
import { DocMachine, loginWith, scriptAgainst, scriptOf, writeUserKeys } from "./doc-program";

/**
 * A Python program set up literally as docs/python.md says (the package from the local registry, the plugin by
 * `npx gpu-rental plugin install`, `pulumi==3.248.0` in its virtual environment, the SDK by `pulumi package add`),
 * then driven by the real engine against a real emulator: a Template, an Instance from it with a NetworkVolume
 * attached, an ApiKey, an SshKey, and an Instance of a second account through an explicit provider; the trainer
 * logged into over the emulator's SSH with the account's key and with a key attached by `ssh_keys`; `get_offers`
 * answering what the SDK's search answers; an `up` that must change nothing, a label change and the attached key's
 * removal made in place (that key then refused), a GpuFleet of 4 resized to 2 (the last two destroyed, the first two
 * untouched), refresh, `pulumi import` of an instance and an SSH key made elsewhere (the printed code pasted in, then
 * no changes), destroy, nothing left in either account, and no key in plaintext.
 */
describe("a Python program, as docs/python.md sets it up", () => {
  let emu: TestEmulator;
  let machine: DocMachine;
  let team: { id: number; key: string };
  const dir = "gpu-python";
  const seeded = () => emu.marketplace.seededUser.id;
  // The user's key and a CI runner's, as the docs' Deploy reads them from ~/.ssh.
  const keys = { mine: ed25519KeyPair("me@laptop"), ci: ed25519KeyPair("ci-runner") };

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 }, ssh: true });
    team = emu.account("team@accounts.gpu-rental.test");
    machine = await DocMachine.start("python-docs");
    writeUserKeys(machine, { id_ed25519: keys.mine, ci_ed25519: keys.ci });
    const script = scriptAgainst(emu, "python.md", ["Set up", "Deploy"], team.key);
    expect(script).toMatch(/pulumi package add gpu-rental/);
    const output = await machine.ok(script);
    expect(output).toMatch(/\+ 9 created/);
  }, 600_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
    await emu?.close();
  });

  it("created each resource under its own account, the volume attached to the instance made from the template", () => {
    const mine = holdingsOf(emu.marketplace, seeded());
    expect(mine.templates).toHaveLength(1);
    expect(mine.volumes).toHaveLength(1);
    expect(mine.instances).toHaveLength(5); // the trainer and the pool's 4
    expect(mine.apiKeys).toHaveLength(2); // the seeded key and the program's
    expect(mine.sshKeys).toHaveLength(1); // the login key; the CI key is the trainer's only
    const trainer = emu.marketplace.instances.all().find((i) => mine.instances.includes(i.id) && i.label === "trainer")!;
    expect(trainer.volume).toEqual({ id: mine.volumes[0], mount_path: "/datasets" });
    expect(trainer.label).toBe("trainer");

    const theirs = holdingsOf(emu.marketplace, team.id);
    expect(theirs.instances).toHaveLength(1);
    expect(theirs).toMatchObject({ templates: [], volumes: [] });
    expect(emu.marketplace.instances.all().find((i) => i.id === theirs.instances[0])!.label).toBe("team-trainer");
  });

  it("rented the GpuFleet of 4 together, no offer lost to a sibling (nor to the trainer beside it)", async () => {
    const pool = JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir)) as number[];
    expect(pool).toHaveLength(4);
    const labels = pool.map((id) => emu.marketplace.instances.all().find((i) => i.id === id)?.label);
    expect(labels).toEqual(["pool-0", "pool-1", "pool-2", "pool-3"]);
    // No contention in this market: a refused acceptance could only be a rental reaching for a sibling's offer.
    expect(emu.marketplace.stats.offersUnavailable).toBe(0);
  });

  it("lets both the account's key and the key attached by ssh_keys log into the trainer, over the emulator's SSH", async () => {
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    for (const key of [keys.mine, keys.ci]) expect(await loginWith(emu, ssh, key.private)).toMatch(/^logged in to \d+$/);
  });

  it("get_offers answers the offers the SDK's search of the same criteria answers, in its order", async () => {
    const offers = JSON.parse(await machine.ok("pulumi stack output h100_offers --json", dir)) as { id: number; per_hour: number }[];
    const searched = await emu.client().offers.search(
      offerQuery({ filters: { gpu_name: { eq: "H100 SXM" }, reliability: { gte: 0.9 } }, order: DEFAULT_ORDER, candidatesPerSearch: 3 }),
    );
    expect(searched).toHaveLength(3);
    expect(offers).toEqual(searched.map((o) => ({ id: o.id, per_hour: o.dph_total })));
  });

  it("keeps both accounts' keys and the key the program made out of state and output", async () => {
    const made = await machine.secretOutput("ci_key", dir);
    expect(made).toMatch(/^\S{16,}$/);
    const state = machine.stateText(dir);
    expect(state).toMatch(/secure|ciphertext/);
    for (const secret of [emu.apiKey, team.key, made]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("changes nothing on a second up, changes the label and detaches the CI key in place, refreshes, adopts an instance and an SSH key by import, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/9 unchanged/);

    // The fleet resized from 4 to 2: updated in place, its last two members destroyed, the first two untouched.
    const pool = JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir)) as number[];
    const resized = await machine.ok("pulumi config set pool_size 2 && pulumi up --yes", dir);
    expect(resized).toMatch(/~ 1 updated/);
    expect(JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir))).toEqual(pool.slice(0, 2));
    const live = new Set(emu.marketplace.instances.all().map((i) => i.id));
    expect(pool.map((id) => live.has(id))).toEqual([true, true, false, false]);

    const trainerId = emu.marketplace.instances.all().find((i) => i.label === "trainer")!.id;
    const before = holdingsOf(emu.marketplace, seeded()).instances;
    // A new label and the CI key detached: one update of the trainer in place; the CI key then logs in no more.
    const update = await machine.ok("pulumi config set label renamed && pulumi config rm trainer_ssh_keys && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    expect(holdingsOf(emu.marketplace, seeded()).instances).toEqual(before);
    expect(emu.marketplace.instances.all().find((i) => i.id === trainerId)!.label).toBe("renamed");
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    await expect(loginWith(emu, ssh, keys.ci.private)).rejects.toThrow(/authentication methods failed/);
    expect(await loginWith(emu, ssh, keys.mine.private)).toBe(`logged in to ${trainerId}`);

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/9 unchanged/);

    // Made by hand (a script, the console): the service knows it, no stack does. The docs' import, with its id.
    const client = emu.client();
    const [offer] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
    const made = await client.instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
    const laptop = await client.sshKeys.add(ed25519KeyPair("me@other-laptop").public);
    const adopt = scriptOf("python.md", ["Adopt what was made elsewhere"]).replaceAll("4242", String(made.new_contract)).replaceAll("4343", String(laptop.id));
    const adopted = await machine.ok(adopt, dir);
    expect(adopted).toMatch(/= 2 imported/);
    expect(adopted).toMatch(/11 unchanged/);
    const program = await machine.ok("cat __main__.py", dir);
    expect(program).toMatch(/adopted = gpu_rental\.Instance\("adopted"/);
    expect(program).toMatch(/laptop = gpu_rental\.SshKey\("laptop"/);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 11 deleted/);
    expect(holdingsOf(emu.marketplace, seeded())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
    expect(holdingsOf(emu.marketplace, team.id)).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
  }, 600_000);
});
