import { ConfigSource, resolveConnection as resolve } from "../../sdk";
import { configureLifecycle, UNKNOWN } from "../../provider/lifecycle";
import { emulator, TestEmulator } from "../helpers/emulator";

const team = { name: "team", apiKeyConfig: "gpu-rental:teamApiKey" };
const key = { name: "reader", permissions: { api: { instance_read: {} } } };

describe("what every resource kind shares: the account it lives in", () => {
  const { diff, update, check } = configureLifecycle({ get: () => undefined }).resource("ApiKey");

  it("replaces a resource that moves to another account (another name or service URL)", () => {
    expect(diff("7", { ...key, account: team }, { ...key, account: { ...team, name: "research" } })).toMatchObject({ changes: true, replaces: ["account"] });
    expect(diff("7", { ...key }, { ...key, account: team })).toMatchObject({ changes: true, replaces: ["account"] });
    expect(diff("7", { ...key, account: team }, { ...key, account: { ...team, apiUrl: "https://eu.example.com" } })).toMatchObject({ replaces: ["account"] });
    expect(diff("7", { ...key, account: team }, { ...key, account: UNKNOWN }, UNKNOWN)).toMatchObject({ replaces: ["account"] });
  });

  it("changes in place, sending nothing, when only where the account's key is read from changes", async () => {
    const moved = { ...team, apiKeyConfig: undefined, apiKeyEnv: "TEAM_KEY" };
    expect(diff("7", { ...key, account: team }, { ...key, account: moved })).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
    // ApiKey has no update of its own: the outputs just take the new account.
    const olds = { ...key, account: team, keyId: 7, key: "secret-value", keyPrefix: "abc" };
    expect(await update("7", olds, { ...key, account: moved })).toEqual({ ...olds, account: moved });
  });

  it("sees no change when nothing changed, whatever adoptId says after adoption", () => {
    expect(diff("7", { ...key, account: team, adoptId: 7 }, { ...key, account: team })).toMatchObject({ changes: false, replaces: [] });
    expect(diff("7", { ...key, account: team }, { ...key, account: team, adoptId: 7 })).toMatchObject({ changes: false });
  });

  it("refuses to replace an adopted object while adoptId still names it: the replacement would adopt it, then delete it", () => {
    expect(() => diff("7", { ...key, adoptId: 7 }, { ...key, name: "renamed", adoptId: 7 })).toThrow(/was adopted \(adoptId 7\) and must now be replaced \(name changed\).*Remove adoptId/);
    expect(diff("7", { ...key, adoptId: 7 }, { ...key, name: "renamed", adoptId: 8 })).toMatchObject({ replaces: ["name"] });
  });

  it("names a malformed account or adoptId in check", () => {
    const { failures } = check({ ...key, account: { name: "9lives", apiKeyConfig: "nocolon" }, adoptId: "x1" });
    expect(failures.map((f) => [f.property, f.reason])).toEqual([
      ["account", expect.stringMatching(/letter followed by/)],
      ["account", expect.stringMatching(/namespace:name/)],
      ["adoptId", expect.stringMatching(/decimal digits/)],
    ]);
    expect(check({ ...key, account: team, adoptId: 12 }).failures).toEqual([]);
  });
});

describe("the connection of an account", () => {
  afterEach(() => {
    delete process.env.TEAM_KEY;
  });

  it("reads the key from the stack config key or the environment variable the account names, never elsewhere", () => {
    const stack: Record<string, string> = { "gpu-rental:apiUrl": "http://svc", "gpu-rental:teamApiKey": "team-key", "gpu-rental:apiKey": "default-key" };
    const config: ConfigSource = { get: (k) => stack[k] };
    // The provider's connection: the stack config its context was made with.
    const resolveConnection: typeof resolve = (explicit, account) => resolve(explicit, account, config);
    expect(resolveConnection({}, { name: "team" })).toEqual({ apiUrl: "http://svc", apiKey: "team-key" });
    expect(resolveConnection({}, { name: "ops", apiKeyConfig: "gpu-rental:teamApiKey", apiUrl: "http://eu" })).toEqual({ apiUrl: "http://eu", apiKey: "team-key" });
    process.env.TEAM_KEY = "env-key";
    expect(resolveConnection({}, { name: "team", apiKeyEnv: "TEAM_KEY" }).apiKey).toBe("env-key");
    expect(resolveConnection().apiKey).toBe("default-key");
    expect(() => resolveConnection({}, { name: "research" })).toThrow(
      "No API key for account research: set it with `pulumi config set --secret gpu-rental:researchApiKey <key>`.",
    );
    expect(() => resolveConnection({}, { name: "ci", apiKeyEnv: "CI_GPU_KEY" })).toThrow("No API key for account ci: the environment variable CI_GPU_KEY is not set.");
  });
});

describe("each kind created through the account its inputs name", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());

  it("creates, reads and deletes under the account's own user", async () => {
    const user = emu.marketplace.accounts.addUser({ email: "team@managed.test" });
    const stack: Record<string, string> = { "gpu-rental:apiUrl": emu.url, "gpu-rental:teamApiKey": emu.marketplace.accounts.issueKey(user.id).key };
    const ApiKey = configureLifecycle({ get: (k) => stack[k] }).resource("ApiKey");
    const { id, outs } = await ApiKey.create({ ...key, account: { name: "team" } });
    expect(emu.marketplace.accounts.keysOf(user.id).map((k) => String(k.id))).toContain(id);
    expect(outs).toMatchObject({ account: { name: "team" } });
    expect(await ApiKey.read(id, outs)).toMatchObject({ keyId: Number(id), account: { name: "team" } });
    await ApiKey.delete(id, outs);
    expect(emu.marketplace.accounts.keysOf(user.id).map((k) => String(k.id))).not.toContain(id);
  });
});
