import { routesOf } from "../../emulator/http/routes";
import { PERMISSIONS } from "../../emulator/domain/accounts";
import { GpuRentalClient } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * Every endpoint declared by the emulator (read from its route table, so none escapes) against every kind of
 * caller: no key, unknown key, revoked key, a key of each scope, an instance key, another user's resource.
 */
let emu: TestEmulator;
let revokedKey: string;
const scopedKeys: Record<string, string> = {};

beforeAll(async () => {
  emu = await emulator();
  const client = emu.client();
  for (const category of PERMISSIONS) {
    scopedKeys[category] = (await client.apiKeys.create({ name: category, permissions: { api: { [category]: {} } } })).key;
  }
  const revoked = await client.apiKeys.create({ name: "revoked" });
  await client.apiKeys.delete(revoked.id);
  revokedKey = revoked.key;
});
afterAll(() => emu.close());

/** The endpoints a key is checked on: every one of the API but those it shows anyone. */
const apiRoutes = () => routesOf(emu.server).filter((r) => r.url.startsWith("/api/") && r.auth !== "public");
const concrete = (url: string) => url.replace(/:(\w+)/g, "999999");
const call = (method: string, url: string, key?: string) =>
  http(emu.url, method, concrete(url), { key, body: method === "GET" ? undefined : {} });

it("declares a permission category for every endpoint", () => {
  expect(apiRoutes().length).toBeGreaterThanOrEqual(9);
  for (const r of apiRoutes()) expect(PERMISSIONS).toContain(r.permission);
});

it("answers its public endpoints without a key, whatever key is sent", async () => {
  const open = routesOf(emu.server).filter((r) => r.auth === "public");
  expect(open.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /api/v0/gpu_names/unique/"]);
  for (const r of open) for (const key of [undefined, "no-such-key-0000", revokedKey]) expect((await call(r.method, r.url, key)).status).toBe(200);
});

it("refuses a missing, unknown or revoked key with 401 or 403 auth_error on every endpoint", async () => {
  for (const r of apiRoutes()) {
    for (const key of [undefined, "no-such-key-0000", revokedKey]) {
      const res = await call(r.method, r.url, key);
      const label = `${r.method} ${r.url} with ${key ?? "no key"}`;
      // Never a success. An auth_error with its msg, except where a logged-out 2FA caller may call without a key:
      // those endpoints answer a bodiless call by their own rules.
      const ownRules = key === undefined && r.auth === "optional";
      const authError = [401, 403].includes(res.status) && res.body.error === "auth_error" && typeof res.body.msg === "string";
      expect([label, res.status < 300, authError || ownRules]).toEqual([label, false, true]);
    }
  }
});

it("lets a scoped key through exactly the endpoints of its categories", async () => {
  for (const r of apiRoutes()) {
    for (const category of PERMISSIONS) {
      const res = await call(r.method, r.url, scopedKeys[category]);
      const label = `${r.method} ${r.url} with ${category}`;
      // Its own category goes through authorization (whatever the empty request then meets, it is not a refusal of
      // the key); any other is refused with 403 permission_denied.
      const refusal = res.status === 401 || res.body.error === "permission_denied" ? [res.status, res.body.error] : "through";
      expect([label, refusal]).toEqual([label, category === r.permission ? "through" : [403, "permission_denied"]]);
    }
  }
});

it("lets the instance key start, stop and destroy its own instance, and nothing else", async () => {
  const client = emu.client();
  const [a, b] = await client.offers.search({ limit: 2 });
  const own = await client.instances.create(a.id, { image: "x" });
  const other = await client.instances.create(b.id, { image: "x" });
  const key = own.instance_api_key!;
  const allowed = new Set(apiRoutes().filter((r) => r.instanceKey).map((r) => `${r.method} ${r.url}`));
  // A deployment's worker fetches its bundle with its instance's key (emulator/DEPLOYMENTS.md).
  expect([...allowed].sort()).toEqual(["DELETE /api/v0/instances/:id/", "GET /api/v0/deployment/:id/download_url/", "PUT /api/v0/instances/:id/"]);
  for (const r of apiRoutes().filter((r) => !r.instanceKey && r.auth !== "optional")) {
    const res = await call(r.method, r.url, key);
    expect([`${r.method} ${r.url}`, res.status]).toEqual([`${r.method} ${r.url}`, 403]);
  }
  const path = (id: number) => `/api/v0/instances/${id}/`;
  expect((await http(emu.url, "PUT", path(other.new_contract), { key, body: { state: "stopped" } })).status).toBe(403);
  expect((await http(emu.url, "PUT", path(own.new_contract), { key, body: { label: "no" } })).status).toBe(403);
  expect((await http(emu.url, "PUT", path(own.new_contract), { key, body: { state: "stopped" } })).status).toBe(200);
  expect((await http(emu.url, "PUT", path(own.new_contract), { key, body: { state: "running" } })).status).toBe(200);
  expect((await http(emu.url, "DELETE", path(other.new_contract), { key, body: {} })).status).toBe(403);
  expect((await http(emu.url, "DELETE", path(own.new_contract), { key, body: {} })).status).toBe(200);
  // Its instance is gone: so is the key.
  expect((await http(emu.url, "PUT", path(other.new_contract), { key, body: { state: "stopped" } })).status).toBe(401);
  await client.instances.destroy(other.new_contract);
});

it("never shows or touches another user's instances or keys", async () => {
  const other = await http(emu.url, "POST", "/_emulator/users", { body: { email: "other@gpu-rental.test" } });
  expect(other.status).toBe(200);
  const otherKey: string = other.body.api_key;
  const mine = emu.client();
  const [offer] = await mine.offers.search({ limit: 1 });
  const { new_contract: id } = await mine.instances.create(offer.id, { image: "x" });
  const myKey = await mine.apiKeys.create({ name: "mine" });

  expect((await http(emu.url, "GET", "/api/v1/instances/", { key: otherKey })).body).toMatchObject({ total_instances: 0, instances: [] });
  expect((await http(emu.url, "GET", `/api/v0/instances/${id}/`, { key: otherKey })).body).toEqual({ instances: null });
  for (const [method, body] of [["PUT", { state: "stopped" }], ["DELETE", {}]] as const) {
    expect((await http(emu.url, method, `/api/v0/instances/${id}/`, { key: otherKey, body })).status).toBe(404);
  }
  expect((await http(emu.url, "GET", "/api/v0/auth/apikeys/", { key: otherKey })).body.apikeys.map((k: any) => k.id)).not.toContain(myKey.id);
  expect((await http(emu.url, "GET", `/api/v0/auth/apikeys/${myKey.id}/`, { key: otherKey })).status).toBe(404);
  expect((await http(emu.url, "DELETE", `/api/v0/auth/apikeys/${myKey.id}/`, { key: otherKey, body: {} })).status).toBe(404);
  expect((await mine.instances.get(id))!.cur_state).toBe("running");
  expect((await http(emu.url, "GET", "/api/v0/users/current/", { key: myKey.key })).status).toBe(200);
  await mine.instances.destroy(id);
});

it("never shows or touches another user's private templates or volumes", async () => {
  const other = await http(emu.url, "POST", "/_emulator/users", { body: { email: "third@gpu-rental.test" } });
  const theirs = new GpuRentalClient({ apiUrl: emu.url, apiKey: other.body.api_key });
  const mine = emu.client();
  const template = await mine.templates.create({
    name: "my-private", image: "ghcr.io/me/private", private: true, docker_login_repo: "", docker_login_user: "", docker_login_pass: "",
  });
  const [volumeOffer] = await mine.volumes.searchNetworkOffers({ limit: 1 });
  const volume = await mine.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 10 });

  expect((await theirs.templates.search()).map((t) => t.hash_id)).not.toContain(template.hash_id);
  await expect(theirs.templates.edit(template.hash_id!, { name: "stolen" })).rejects.toMatchObject({ status: 404 });
  await expect(theirs.templates.delete({ id: template.id })).rejects.toMatchObject({ status: 404 });
  expect((await theirs.volumes.list()).map((v) => v.id)).not.toContain(volume.id);
  await expect(theirs.volumes.delete(volume.id)).rejects.toMatchObject({ status: 404 });
  // And neither can they use them to create an instance.
  const [offer] = await theirs.offers.search({ limit: 1 });
  await expect(theirs.instances.create(offer.id, { template_hash_id: template.hash_id! })).rejects.toMatchObject({ status: 404 });
  await expect(
    theirs.instances.create(offer.id, { image: "x", volume_info: { create_new: false, volume_id: volume.id, mount_path: "/data" } }),
  ).rejects.toMatchObject({ status: 400 });

  expect((await mine.templates.search()).map((t) => t.hash_id)).toContain(template.hash_id);
  expect((await mine.volumes.list()).map((v) => v.id)).toContain(volume.id);
});

it("does not let a scoped key mint a wider key", async () => {
  const res = await http(emu.url, "POST", "/api/v0/auth/apikeys/", { key: scopedKeys.user_write, body: { name: "wider" } });
  expect(res).toMatchObject({ status: 403, body: { error: "permission_escalation" } });
  const narrower = { api: { user_write: {} } };
  expect((await http(emu.url, "POST", "/api/v0/auth/apikeys/", { key: scopedKeys.user_write, body: { permissions: narrower } })).status).toBe(200);
  const unknown = await http(emu.url, "POST", "/api/v0/auth/apikeys/", { key: emu.apiKey, body: { permissions: { api: { root: {} } } } });
  expect(unknown).toMatchObject({ status: 400, body: { error: "invalid_permissions", msg: expect.stringMatching(/root/) } });
  // A permission set that is not one at all is the same code; another bad field is still `invalid_args`.
  const malformed = await http(emu.url, "POST", "/api/v0/auth/apikeys/", { key: emu.apiKey, body: { permissions: "everything" } });
  expect(malformed).toMatchObject({ status: 400, body: { error: "invalid_permissions" } });
  const badName = await http(emu.url, "POST", "/api/v0/auth/apikeys/", { key: emu.apiKey, body: { name: { no: 1 } } });
  expect(badName).toMatchObject({ status: 400, body: { error: "invalid_args" } });
});
