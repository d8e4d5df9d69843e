import { direct, ENV_VAR } from "../../provider/lifecycle";
import { REAL_TIME } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

const EnvVar = direct(ENV_VAR);
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

describe("EnvVar's check and diff", () => {
  it("refuses at preview what the service refuses, naming the input", () => {
    const reasons = (news: Record<string, unknown>) => EnvVar.check(news).failures.map((f) => `${f.property}: ${f.reason}`);
    expect(reasons({ name: "HF_TOKEN", value: "x" })).toEqual([]);
    expect(reasons({ name: "hf-token", value: "x" })).toEqual([expect.stringMatching(/^name: .*letters, digits and underscores/)]);
    expect(reasons({ name: "1ST", value: "x" })).toEqual([expect.stringMatching(/^name: /)]);
    expect(reasons({ name: "EMPTY", value: "" })).toEqual([expect.stringMatching(/^value: .*EMPTY is empty/)]);
    expect(reasons({ name: "LONG", value: "x".repeat(4097) })).toEqual([expect.stringMatching(/^value: .*at most 4096/)]);
    expect(reasons({ name: "NO_VALUE" }).map((r) => r.split(":")[0])).toEqual(["value"]);
  });

  it("replaces for another name (the old one first), sets a new value in place; the case of the name is no other name", () => {
    const olds = { name: "HF_TOKEN", value: "a", key: "HF_TOKEN" };
    expect(EnvVar.diff(olds, { name: "HF_TOKEN", value: "a" })).toMatchObject({ changes: false });
    expect(EnvVar.diff(olds, { name: "HF_TOKEN", value: "b" })).toEqual({ changes: true, replaces: [], updates: ["value"], deleteBeforeReplace: false });
    expect(EnvVar.diff(olds, { name: "WANDB_API_KEY", value: "a" })).toEqual({ changes: true, replaces: ["name"], updates: [], deleteBeforeReplace: true });
    expect(EnvVar.diff(olds, { name: "hf_token", value: "a" })).toMatchObject({ replaces: [], updates: ["name"] });
    expect(EnvVar.diff(olds, { name: "HF_TOKEN", value: UNKNOWN }, UNKNOWN)).toMatchObject({ replaces: [], updates: ["value"] });
  });
});

describe("EnvVar over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  const options = (extra: { log?: (line: string) => void } = {}) => ({ client: emu.client(), ...extra });
  const kept = () => emu.marketplace.accounts.user(emu.marketplace.seededUser.id)?.envVars ?? {};

  it("creates a variable upper-cased, sets a new value in place, sees it gone, and deletes it", async () => {
    const { id, outs } = await EnvVar.create({ name: "hf_token", value: "first" }, options());
    expect([id, outs]).toEqual(["HF_TOKEN", { name: "hf_token", value: "first", key: "HF_TOKEN" }]);
    expect(kept()).toEqual({ HF_TOKEN: "first" });
    // The outputs are the declared variable's, as after a creation: the next diff of the same inputs is no change.
    const updated = await EnvVar.update(id, outs, { name: "hf_token", value: "second" }, options());
    expect(updated).toEqual({ name: "hf_token", value: "second", key: "HF_TOKEN" });
    expect(EnvVar.diff(updated, { name: "hf_token", value: "second" })).toMatchObject({ changes: false });
    expect(kept()).toEqual({ HF_TOKEN: "second" });
    // Read keeps the state (no value is ever read back) while the variable exists.
    expect(await EnvVar.read(id, { ...outs, value: "second" }, options())).toEqual({ name: "hf_token", value: "second", key: "HF_TOKEN" });
    await EnvVar.delete(id, options());
    expect(kept()).toEqual({});
    expect(await EnvVar.read(id, outs, options())).toBeNull();
    await EnvVar.delete(id, options()); // already gone: still fine
  });

  it("takes over the account's variable of that name (a cut-off run's, or one set by hand), saying so at preview", async () => {
    await emu.client().envVars.create("WANDB_API_KEY", "by-hand");
    const op = { ...options(), clock: REAL_TIME, log: () => undefined, spendCap: () => undefined };
    expect(await ENV_VAR.warnings!({ name: "wandb_api_key", value: "declared" }, UNKNOWN, op)).toEqual([
      expect.stringMatching(/has the environment variable WANDB_API_KEY already: up takes it over and sets its value/),
    ]);
    expect(await ENV_VAR.warnings!({ name: "OTHER", value: "x" }, UNKNOWN, op)).toEqual([]);
    const { id } = await EnvVar.create({ name: "wandb_api_key", value: "declared" }, options());
    expect(id).toBe("WANDB_API_KEY");
    expect(kept()).toEqual({ WANDB_API_KEY: "declared" });
    await EnvVar.delete(id, options());
  });

  it("imports a variable with the value the service shows (masked), says to declare the real one, and finds none the account lacks", async () => {
    await emu.client().envVars.create("IMPORTED", "v");
    const said: string[] = [];
    expect(await EnvVar.import("imported", options({ log: (line: string) => said.push(line) }))).toEqual({
      inputs: { name: "IMPORTED", value: "*****" },
      outs: { name: "IMPORTED", value: "*****", key: "IMPORTED" },
    });
    expect(said).toEqual([expect.stringMatching(/IMPORTED: the service shows its value as "\*\*\*\*\*"; declare the real value's source in its place/)]);
    expect(await EnvVar.import("ABSENT", options())).toBeNull();
    await expect(EnvVar.adopt("ABSENT", { name: "ABSENT", value: "x" }, options())).rejects.toThrow(/the account has none of that name/);
    await emu.client().envVars.delete("IMPORTED");
  });
});
