import { MAX_ENV_VARS } from "../../emulator/domain/env-vars";
import { BadRequestError, NotFoundError } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/** docs/service-facts.md#account-environment-variables: the account's environment variables (`/api/v0/secrets/`). */
describe("account environment variables", () => {
  let emu: TestEmulator;
  const call = (method: string, body?: unknown, key = emu.apiKey) => http(emu.url, method, "/api/v0/secrets/", { key, body });

  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(() => emu.close());

  it("creates with the key upper-cased, lists every value masked, changes in place and deletes by the key in the body", async () => {
    expect(await call("GET")).toMatchObject({ status: 200, body: { success: true, secrets: {} } });
    expect(await call("POST", { key: "hf_token", value: "hf_abc" })).toMatchObject({ status: 200, body: { success: true, msg: expect.stringContaining("HF_TOKEN") } });
    expect((await call("POST", { key: "WANDB_API_KEY", value: "w-1" })).status).toBe(200);
    const listed = await call("GET");
    expect(listed.body).toEqual({ success: true, secrets: { HF_TOKEN: "*****", WANDB_API_KEY: "*****" } });
    expect(JSON.stringify(listed.body)).not.toMatch(/hf_abc|w-1/);
    expect((await call("PUT", { key: "Hf_Token", value: "hf_new" })).body).toMatchObject({ success: true });
    expect(emu.marketplace.accounts.user(emu.marketplace.seededUser.id)?.envVars).toEqual({ HF_TOKEN: "hf_new", WANDB_API_KEY: "w-1" });
    expect((await call("DELETE", { key: "wandb_api_key" })).body).toMatchObject({ success: true });
    expect((await call("GET")).body.secrets).toEqual({ HF_TOKEN: "*****" });
  });

  it("refuses with the service's codes: missing_input, invalid_characters, empty_input, existing_key, nonexistent_key", async () => {
    const refused = async (method: string, body: unknown, error: string) => {
      const res = await call(method, body);
      expect([method, JSON.stringify(body), res.status, res.body.success, res.body.error]).toEqual([method, JSON.stringify(body), 400, false, error]);
      expect(res.body.msg).toEqual(expect.any(String));
    };
    await refused("POST", { key: "A" }, "missing_input");
    await refused("POST", { value: "x" }, "missing_input");
    await refused("DELETE", {}, "missing_input");
    await refused("POST", { key: "1ST", value: "x" }, "invalid_characters");
    await refused("POST", { key: "HAS-DASH", value: "x" }, "invalid_characters");
    await refused("POST", { key: "EMPTY", value: "" }, "empty_input");
    await refused("POST", { key: "LONG", value: "x".repeat(5000) }, "input_too_long");
    expect((await call("POST", { key: "TAKEN", value: "x" })).status).toBe(200);
    await refused("POST", { key: "taken", value: "y" }, "existing_key");
    await refused("PUT", { key: "ABSENT", value: "y" }, "nonexistent_key");
    await refused("DELETE", { key: "ABSENT" }, "nonexistent_key");
    // Nothing refused was kept.
    expect((await call("GET")).body.secrets).toEqual({ TAKEN: "*****" });
  });

  it(`holds at most ${MAX_ENV_VARS} variables per account (max_secrets), each account its own`, async () => {
    for (let i = 0; i < MAX_ENV_VARS; i++) expect((await call("POST", { key: `VAR_${i}`, value: "x" })).status).toBe(200);
    expect((await call("POST", { key: "ONE_MORE", value: "x" })).body.error).toBe("max_secrets");
    const other = emu.account("other@gpu-rental.test");
    expect((await call("GET", undefined, other.key)).body.secrets).toEqual({});
    expect((await call("POST", { key: "ONE_MORE", value: "x" }, other.key)).status).toBe(200);
  });

  it("reads and writes with the permissions user_read and user_write", async () => {
    const scoped = async (permissions: Record<string, Record<string, unknown>>) => (await emu.client().apiKeys.create({ name: "scoped", permissions: { api: permissions } })).key;
    const reader = await scoped({ user_read: {} });
    expect((await call("GET", undefined, reader)).status).toBe(200);
    expect((await call("POST", { key: "NOPE", value: "x" }, reader)).status).toBe(403);
    expect((await call("GET", undefined, await scoped({ instance_read: {} }))).status).toBe(403);
  });

  it("through the SDK: names the key as kept, masks values, and types the refusals", async () => {
    const client = emu.client();
    expect(await client.envVars.create("hf_token", "hf_abc")).toBe("HF_TOKEN");
    expect(await client.envVars.list()).toEqual({ HF_TOKEN: "*****" });
    await expect(client.envVars.create("HF_TOKEN", "again")).rejects.toThrow(BadRequestError);
    await client.envVars.update("HF_TOKEN", "hf_new");
    await expect(client.envVars.update("ABSENT", "x")).rejects.toThrow(NotFoundError);
    await client.envVars.delete("HF_TOKEN");
    await expect(client.envVars.delete("HF_TOKEN")).rejects.toThrow(NotFoundError);
    expect(await client.envVars.list()).toEqual({});
  });
});
