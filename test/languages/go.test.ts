import { Clock, holdingsOf } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { DocMachine, scriptAgainst, scriptOf } from "./doc-program";

/**
 * `pulumi import` prints a Go program of its own: its statements pasted into main.go's function, in a block of
 * their own (where `err :=` declares a new err), before the exports, as docs/go.md tells a user to move them.
 */
function pasteInto(main: string, printed: string): string {
  const body = /pulumi\.Run\(func\(ctx \*pulumi\.Context\) error \{\n([\s\S]*?)\n\t\treturn nil\n\t\}\)/.exec(printed)?.[1];
  if (!body) throw new Error(`no program body in the printed code:\n${printed}`);
  const at = main.indexOf("\t\tctx.Export(");
  if (at < 0) throw new Error("main.go has no exports to paste before");
  return `${main.slice(0, at)}\t\t{\n${body}\n\t\t}\n${main.slice(at)}`;
}

/**
 * A Go program set up literally as docs/go.md says (the package from the local registry, the plugin by
 * `npx gpu-rental plugin install`, the SDK by `pulumi package add`, which points go.mod at it and runs go mod
 * tidy), then driven by the real engine, through gpu-rental's own Go language host (the program built with
 * `go build`), against a real emulator: a Template, an Instance from it, and an Instance of a second account
 * through an explicit provider; an `up` that must change nothing, a label change made in place, `pulumi import`
 * of an instance made elsewhere printing Go code that builds (pasted in, then no changes), destroy, nothing left in
 * either account, and no key in plaintext.
 */
describe("a Go program, as docs/go.md sets it up", () => {
  let emu: TestEmulator;
  let machine: DocMachine;
  let team: { id: number; key: string };
  const dir = "gpu-go";
  const seeded = () => emu.marketplace.seededUser.id;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    team = emu.account("team@accounts.gpu-rental.test");
    machine = await DocMachine.start("go-docs");
    const script = scriptAgainst(emu, "go.md", ["Set up", "Deploy"], team.key);
    expect(script).toMatch(/pulumi package add gpu-rental/);
    expect(await machine.ok(script)).toMatch(/\+ 5 created/);
  }, 600_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
    await emu?.close();
  });

  it("created each resource under its own account, the instance from the template", () => {
    const mine = holdingsOf(emu.marketplace, seeded());
    expect(mine).toMatchObject({ instances: [expect.any(Number)], templates: [expect.any(Number)], volumes: [] });
    const trainer = emu.marketplace.instances.all().find((i) => i.id === mine.instances[0])!;
    expect(trainer.label).toBe("trainer");
    expect(trainer.config.image).toBe("pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime");
    const theirs = holdingsOf(emu.marketplace, team.id);
    expect(theirs).toMatchObject({ instances: [expect.any(Number)], templates: [], volumes: [] });
    expect(emu.marketplace.instances.all().find((i) => i.id === theirs.instances[0])!.label).toBe("team-trainer");
  });

  it("generated the SDK as a module of its own and pointed go.mod at it, the engine's Pulumi SDK kept", async () => {
    const goMod = await machine.ok("cat go.mod", dir);
    expect(goMod).toMatch(/^replace github\.com\/gpu-rental\/gpu-rental\/sdk\/go => \.\/sdks\/gpu-rental$/m);
    expect(goMod).toMatch(/^\tgithub\.com\/pulumi\/pulumi\/sdk\/v3 v3\.248\.0$/m);
    expect(await machine.ok("cat Pulumi.yaml", dir)).toMatch(/packages:\n {2}gpu-rental: gpu-rental@0\.1\.0/);
  });

  it("kept both accounts' keys out of state and output", () => {
    const state = machine.stateText(dir);
    expect(state).toMatch(/secure|ciphertext/);
    for (const secret of [emu.apiKey, team.key]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("changes nothing on a second up, changes the label in place, adopts by import with Go code that builds, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    const [trainerId] = holdingsOf(emu.marketplace, seeded()).instances;
    const update = await machine.ok("pulumi config set label renamed && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    expect(holdingsOf(emu.marketplace, seeded()).instances).toEqual([trainerId]);
    expect(emu.marketplace.instances.all().find((i) => i.id === trainerId)!.label).toBe("renamed");

    // Made by hand (a script, the console): the service knows it, no stack does. The docs' import, with its id.
    const client = emu.client();
    const [offer] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
    const made = await client.instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
    const adopt = scriptOf("go.md", ["Adopt what was made elsewhere"]).replaceAll("4242", String(made.new_contract));
    expect(await machine.ok(adopt, dir)).toMatch(/= 1 imported/);
    const printed = await machine.ok("cat adopted.go", dir);
    expect(printed).toMatch(/_, err := gpurental\.NewInstance\(ctx, "adopted", &gpurental\.InstanceArgs\{/);
    expect(printed).toMatch(/Label: +pulumi\.String\("made-by-hand"\)/);
    // The printed program builds as it is, then its statement moves into main.go and the next up changes nothing.
    await machine.ok("go build -o /dev/null adopted.go", dir);
    const main = pasteInto(await machine.ok("cat main.go", dir), printed);
    await machine.ok(`rm adopted.go && cat > main.go <<'MAIN_GO'\n${main}MAIN_GO`, dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/6 unchanged/);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 6 deleted/);
    expect(holdingsOf(emu.marketplace, seeded())).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
    expect(holdingsOf(emu.marketplace, team.id)).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
  }, 600_000);
});
