import { Clock, holdingsOf } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { DocMachine, scriptAgainst, scriptOf } from "./doc-program";

/**
 * A Python program set up literally as docs/python.md says (the package from the local registry, the plugin by
 * `npx gpu-rental plugin install`, `pulumi==3.248.0` in its virtual environment, the SDK by `pulumi package add`),
 * then driven by the real engine against a real emulator: a Template, an Instance from it with a NetworkVolume
 * attached, an ApiKey, and an Instance of a second account through an explicit provider; an `up` that must change
 * nothing, a label change made in place, a GpuFleet of 4 resized to 2 (the last two destroyed, the first two
 * untouched), refresh, `pulumi import` of an instance made elsewhere (the printed code
 * pasted in, then no changes), destroy, nothing left in either account, and no key in plaintext.
 */
describe("a Python program, as docs/python.md sets it up", () => {
  let emu: TestEmulator;
  let machine: DocMachine;
  let team: { id: number; key: string };
  const dir = "gpu-python";
  const seeded = () => emu.marketplace.seededUser.id;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    team = emu.account("team@accounts.gpu-rental.test");
    machine = await DocMachine.start("python-docs");
    const script = scriptAgainst(emu, "python.md", ["Set up", "Deploy"], team.key);
    expect(script).toMatch(/pulumi package add gpu-rental/);
    const output = await machine.ok(script);
    expect(output).toMatch(/\+ 8 created/);
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

  it("changes nothing on a second up, changes the label in place, refreshes, adopts by import, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/8 unchanged/);

    // The fleet resized from 4 to 2: updated in place, its last two members destroyed, the first two untouched.
    const pool = JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir)) as number[];
    const resized = await machine.ok("pulumi config set pool_size 2 && pulumi up --yes", dir);
    expect(resized).toMatch(/~ 1 updated/);
    expect(JSON.parse(await machine.ok("pulumi stack output pool_ids --json", dir))).toEqual(pool.slice(0, 2));
    const live = new Set(emu.marketplace.instances.all().map((i) => i.id));
    expect(pool.map((id) => live.has(id))).toEqual([true, true, false, false]);

    const trainerId = emu.marketplace.instances.all().find((i) => i.label === "trainer")!.id;
    const before = holdingsOf(emu.marketplace, seeded()).instances;
    const update = await machine.ok("pulumi config set label renamed && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    expect(holdingsOf(emu.marketplace, seeded()).instances).toEqual(before);
    expect(emu.marketplace.instances.all().find((i) => i.id === trainerId)!.label).toBe("renamed");

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/8 unchanged/);

    // Made by hand (a script, the console): the service knows it, no stack does. The docs' import, with its id.
    const client = emu.client();
    const [offer] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
    const made = await client.instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
    const adopt = scriptOf("python.md", ["Adopt what was made elsewhere"]).replaceAll("4242", String(made.new_contract));
    const adopted = await machine.ok(adopt, dir);
    expect(adopted).toMatch(/= 1 imported/);
    expect(adopted).toMatch(/9 unchanged/);
    expect(await machine.ok("cat __main__.py", dir)).toMatch(/adopted = gpu_rental\.Instance\("adopted"/);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 9 deleted/);
    expect(holdingsOf(emu.marketplace, seeded())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
    expect(holdingsOf(emu.marketplace, team.id)).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
  }, 600_000);
});
