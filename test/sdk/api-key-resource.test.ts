import { GpuRentalClient, UnauthorizedError } from "../../sdk";
import { API_KEY, direct } from "../../provider/lifecycle";
import { diffApiKeySpec } from "../../provider/lifecycle/api-key";
import { emulator, TestEmulator } from "../helpers/emulator";

const ApiKey = direct(API_KEY);

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const base = { name: "dashboard", permissions: { api: { instance_read: {} } } };

describe("diffApiKeySpec", () => {
  it("replaces for every change, issuing the new key first", () => {
    expect(diffApiKeySpec(base, { ...base, name: "other" })).toEqual({ changes: true, replaces: ["name"], deleteBeforeReplace: false });
    expect(diffApiKeySpec(base, { ...base, permissions: { api: { instance_read: {}, misc: {} } } }).replaces).toEqual(["permissions"]);
    expect(diffApiKeySpec(base, { name: "dashboard" }).replaces).toEqual(["permissions"]);
  });

  it("sees no change in outputs or in an empty name, and counts unknown values as changes", () => {
    expect(diffApiKeySpec({ permissions: base.permissions, keyId: 3, key: "k", keyPrefix: "ab" }, { name: "", permissions: base.permissions }).changes).toBe(false);
    expect(diffApiKeySpec(base, { ...base, permissions: UNKNOWN }, UNKNOWN).replaces).toEqual(["permissions"]);
  });
});

describe("checkApiKeyInputs", () => {
  it("names each bad input", () => {
    const { failures } = ApiKey.check({ name: "x".repeat(101), permissions: { instance_read: {} } });
    expect([...new Set(failures.map((f) => f.property))].sort()).toEqual(["name", "permissions"]);
    expect(ApiKey.check({}).failures).toEqual([]);
  });
});

describe("API key resource over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  const options = () => ({ client: emu.client() });
  const clientWith = (apiKey: string) => new GpuRentalClient({ apiUrl: emu.url, apiKey, retries: 0 });

  it("issues a scoped key, reads it, and revokes it", async () => {
    const { id, outs } = await ApiKey.create(base, options());
    expect(outs).toMatchObject({ ...base, keyId: Number(id), key: expect.any(String), keyPrefix: expect.any(String) });
    expect(outs.key!.startsWith(outs.keyPrefix!)).toBe(true);
    // It works, within its scope only.
    await expect(clientWith(outs.key!).instances.list()).resolves.toEqual([]);
    await expect(clientWith(outs.key!).users.current()).rejects.toBeInstanceOf(UnauthorizedError);

    // The value is never shown again: a read keeps the one in state.
    expect(await ApiKey.read(id, outs, options())).toMatchObject({ keyId: Number(id), key: outs.key, keyPrefix: outs.keyPrefix });

    await ApiKey.delete(id, options());
    await expect(clientWith(outs.key!).instances.list()).rejects.toMatchObject({ name: "ListingError", cause: expect.any(UnauthorizedError) });
    expect(await ApiKey.read(id, outs, options())).toBeNull();
    await ApiKey.delete(id, options()); // already revoked: still fine
  });

  it("refuses bad input before anything is sent: a permission set that is not one, a category that does not exist", async () => {
    await expect(ApiKey.create({ permissions: { api: 1 } }, options())).rejects.toThrow(/Invalid ApiKey: permissions/);
    await expect(ApiKey.create({ permissions: { api: { teleport: {} } } }, options())).rejects.toThrow(/Unknown permission categories: teleport/);
  });
});
