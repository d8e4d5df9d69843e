import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { programWords, schemaNames } from "../../provider/plugin/program-words";
import { packageSchema } from "../../provider/schema/schema";

/** The plugin's messages as the program beside which it runs spells the schema's property names. */
describe("the plugin speaks the program's language", () => {
  const dirs: string[] = [];
  const beside = (pulumiYaml: string | undefined) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-words-"));
    dirs.push(dir);
    if (pulumiYaml !== undefined) fs.writeFileSync(path.join(dir, "Pulumi.yaml"), pulumiYaml);
    return programWords(() => schemaNames(packageSchema("0.1.0")), dir);
  };
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const refusal = { property: "maxLifetime", reason: 'maxLifetime: maxLifetime "soon" is not a duration; see idleTimeout and adoptIds' };

  it.each([
    ["python (runtime options)", "name: p\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n", 'max_lifetime: max_lifetime "soon" is not a duration; see idle_timeout and adopt_ids'],
    ["go", "name: g\nruntime: go\n", 'MaxLifetime: MaxLifetime "soon" is not a duration; see IdleTimeout and AdoptIds'],
    ["yaml (the schema's words)", "name: y\nruntime: yaml\n", refusal.reason],
    ["nodejs (the schema's words)", "name: n\nruntime: nodejs\n", refusal.reason],
  ])("%s", (_name, yaml, reason) => {
    const words = beside(yaml);
    const failure = words.failure(refusal);
    expect(failure.reason).toBe(reason);
    // The engine shows a failure's value by the schema's name: a name spelled otherwise is left to the reason.
    expect(failure.property).toBe(reason === refusal.reason ? "maxLifetime" : "");
    expect(words.failure({ property: "image", reason: "image: required" })).toEqual({ property: "image", reason: "image: required" });
  });

  it("keeps the schema's words without a Pulumi.yaml, and leaves other words alone", () => {
    expect(beside(undefined).text(refusal.reason)).toBe(refusal.reason);
    expect(beside("runtime: python\n").text("the label maxLifetimes and gpu_ram stay; offerId goes")).toBe("the label maxLifetimes and gpu_ram stay; offer_id goes");
  });
});
