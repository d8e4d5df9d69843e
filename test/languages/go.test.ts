import { GpuRentalClient } from "../../sdk";
import { DocMachine, pageScript, portIsFree, scriptOf, terminalsOf } from "./doc-program";

/** The page's emulator, as it starts it, and its accounts' keys as the page gives them. */
const URL = "http://127.0.0.1:8768";
const KEYS = { mine: "local-dev-key-1", team: "team-dev-key-1" };
const client = (key: string) => new GpuRentalClient({ apiUrl: URL, apiKey: key, minRetryDelayMs: 5 });

/** What an account holds, as the service answers it. */
async function holdings(key: string) {
  const api = client(key);
  const [instances, volumes, templates] = await Promise.all([api.instances.list(), api.volumes.list("network_volume"), api.templates.search()]);
  return { instances, volumes, templates: templates.filter((t) => t.name === "go-worker") };
}

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
 * A Go program set up and deployed literally as docs/go.md says, nothing swapped in (the package from the local
 * registry, the plugin by `npx gpu-rental plugin install`, the SDK by `pulumi package add`, which points go.mod at
 * it and runs go mod tidy; the page's emulator in a terminal of its own with the second account's key), driven by
 * the real engine, through gpu-rental's own Go language host (the program built with `go build`): a Template, an Instance from it, and an Instance of a second account
 * through an explicit provider; an `up` that must change nothing, a label change made in place, `pulumi import`
 * of an instance made elsewhere printing Go code that builds (pasted in, then no changes), destroy, nothing left in
 * either account, and no key in plaintext.
 */
describe("a Go program, as docs/go.md sets it up", () => {
  let machine: DocMachine;
  let output: string;
  const dir = "gpu-go";

  beforeAll(async () => {
    expect(await portIsFree(8768)).toBe(true);
    machine = await DocMachine.start("go-docs");
    const page = pageScript("docs/go.md", ["Set up", "Deploy"]);
    expect(terminalsOf(page)).toEqual(["npx gpu-rental emulator --port 8768 --api-key local-dev-key-1 --account-key team-dev-key-1"]);
    output = await machine.followPage(page, [/Control API/]);
  }, 600_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
  });

  it("created each resource under its own account, the instance from the template", async () => {
    expect(output).toMatch(/\+ 5 created/);
    const mine = await holdings(KEYS.mine);
    expect(mine.templates).toHaveLength(1);
    expect(mine.volumes).toEqual([]);
    expect(mine.instances.map((i) => [i.label, i.image_uuid, i.template_hash_id])).toEqual([["trainer", "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime", mine.templates[0].hash_id]]);
    const theirs = await holdings(KEYS.team);
    // (The template is the first account's; a search shows it to the second too, as a public one.)
    expect([theirs.instances.map((i) => i.label), theirs.volumes]).toEqual([["team-trainer"], []]);
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
    for (const secret of Object.values(KEYS)) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("passes the page's CI test, its command as printed (a throwaway emulator of its own: this one untouched)", async () => {
    const ids = async () => (await holdings(KEYS.mine)).instances.map((i) => i.id);
    const before = await ids();
    const output = await machine.ok(scriptOf("go.md", ["Test it as CI does"]), dir);
    expect(output).toMatch(/gpu-rental test: (\d+) of \1 steps passed/);
    expect(await ids()).toEqual(before);
  }, 600_000);

  it("changes nothing on a second up, changes the label in place, adopts by import with Go code that builds, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    const [trainer] = (await holdings(KEYS.mine)).instances;
    const update = await machine.ok("pulumi config set label renamed && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    expect((await holdings(KEYS.mine)).instances.map((i) => [i.id, i.label])).toEqual([[trainer.id, "renamed"]]);

    // Made by hand (a script, the console): the service knows it, no stack does. The docs' import, with its id.
    const [offer] = await client(KEYS.mine).offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
    const made = await client(KEYS.mine).instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
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
    for (const key of Object.values(KEYS)) {
      const left = await holdings(key);
      expect([left.instances, left.volumes, left.templates]).toEqual([[], [], []]);
    }
  }, 600_000);
});
