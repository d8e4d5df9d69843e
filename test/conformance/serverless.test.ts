import { createVerify } from "node:crypto";
import { verifyRouteSignature } from "../../sdk";
import { diskOf } from "../../emulator/domain/instances";
import { storagePerHour } from "../../emulator/domain/offers";
import { emulator, http as call, TestEmulator } from "../helpers/emulator";

/**
 * Serverless endpoints, worker groups and the autoscaler on the emulator's clock (emulator/SERVERLESS.md), over
 * HTTP, without emulated machines: a worker is ready once its instance runs. Serving workers are
 * test/ssh/serverless.test.ts's.
 */
describe("serverless endpoints and the autoscaler (emulator/SERVERLESS.md)", () => {
  let emu: TestEmulator;
  const api = (method: string, path: string, body?: unknown, key = emu.apiKey) => call(emu.url, method, path, { key, body });
  const boot = () => emu.marketplace.clock.advance(emu.marketplace.lifecycle.provisioningMs + emu.marketplace.lifecycle.loadingMs + 1);
  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  const template = async () => {
    const res = await api("POST", "/api/v0/template/", { name: "model", image: "python:3.11", env: "-p 8000:8000", runtype: "ssh", ssh_direct: true, onstart: "true", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
    expect(res.status).toBe(200);
    return res.body.template.hash_id as string;
  };
  const endpoint = async (targets: Record<string, unknown>) => {
    const made = await api("POST", "/api/v0/endptjobs/", { endpoint_name: "llm", cold_workers: 0, max_workers: 3, min_load: 0, ...targets });
    expect(made.status).toBe(200);
    return made.body.result as number;
  };
  const group = async (endpointId: number, hash: string) => {
    const made = await api("POST", "/api/v0/workergroups/", { endpoint_id: endpointId, template_hash: hash, search_params: "num_gpus=1", gpu_ram: 8 });
    expect(made.status).toBe(200);
    return made.body.id as number;
  };
  const workers = async (id: number) => (await call(emu.url, "POST", "/get_endpoint_workers/", { key: emu.apiKey, body: { id } })).body as { id: number; status: string }[];
  const route = (body: Record<string, unknown>) => call(emu.url, "POST", "/route/", { body: { endpoint: "llm", api_key: emu.apiKey, ...body } });

  it("creates, lists, reads, changes and deletes endpoints and worker groups on both paths, with the vendor's refusals", async () => {
    const id = await endpoint({ inactivity_timeout: 60 });
    const listed = (await api("GET", "/api/v0/endptjobs/")).body.results;
    expect(listed).toEqual([expect.objectContaining({ id, endpoint_name: "llm", cold_workers: 0, max_workers: 3, target_util: 0.9, cold_mult: 2.5, inactivity_timeout: 60, endpoint_state: "active", api_key: expect.any(String) })]);
    expect((await api("PUT", `/api/v0/endptjobs/${id}/`, { max_workers: 5, cold_mult: null })).body).toEqual({ success: true });
    expect((await api("GET", `/api/v0/endptjobs/${id}/`)).body.result).toMatchObject({ max_workers: 5, cold_mult: 2.5 });
    expect((await api("PUT", "/api/v0/endptjobs/999/", { max_workers: 5 })).body).toMatchObject({ error: "invalid_args", msg: expect.stringContaining("Endpointgroup not found") });
    expect((await api("POST", "/api/v0/endptjobs/", { target_util: 1.5 })).status).toBe(400);

    const hash = await template();
    expect((await api("POST", "/api/v0/autojobs/", { endpoint_id: 999, template_hash: hash })).body.msg).toMatch(/valid endpoint identifier/);
    expect((await api("POST", "/api/v0/autojobs/", { endpoint_id: id })).body.msg).toMatch(/template_hash or template_id/);
    expect((await api("POST", "/api/v0/autojobs/", { endpoint_id: id, template_hash: hash, search_params: "num_gpus>>1" })).status).toBe(400);
    // A value of the wrong type is refused at once, not by the autoscaler's search later.
    expect((await api("POST", "/api/v0/autojobs/", { endpoint_id: id, template_hash: hash, search_params: "num_gpus=abc" })).body).toMatchObject({ error: "invalid_args", msg: expect.stringContaining("num_gpus") });
    expect(emu.marketplace.serverless.groupsOfOwner(emu.marketplace.seededUser.id)).toEqual([]);
    const groupId = (await api("POST", "/api/v0/autojobs/", { endpoint_name: "llm", template_hash: hash, search_params: "gpu_name=RTX_4090 num_gpus>=1" })).body.id;
    const groups = (await api("GET", "/api/v0/workergroups/")).body.results;
    expect(groups).toEqual([expect.objectContaining({ id: groupId, endpoint_id: id, template_hash: hash, search_query: { gpu_name: { eq: "RTX 4090" }, num_gpus: { gte: 1 } }, gpu_ram: 24, test_workers: 3 })]);
    expect((await api("PUT", `/api/v0/workergroups/${groupId}/`, { gpu_ram: 16 })).body).toEqual({ success: true });
    expect((await api("DELETE", "/api/v0/autojobs/12345/")).status).toBe(404);
    expect((await api("DELETE", `/api/v0/autojobs/${groupId}/`)).body).toMatchObject({ success: true, deleted_workers: [] });
    expect((await api("DELETE", `/api/v0/endptjobs/${id}/`)).body).toMatchObject({ success: true });
    expect((await api("GET", "/api/v0/endptjobs/")).body.results).toEqual([]);
  });

  it("routes to a ready worker with a signature its public key verifies; scales up from zero, to the cap and not beyond, and back to zero", async () => {
    const id = await endpoint({ inactivity_timeout: 60 });
    await group(id, await template());
    // No worker: the request waits, and the autoscaler rents one.
    const first = await route({ cost: 100 });
    expect(first.body).toMatchObject({ endpoint: "llm", status: expect.stringContaining("No worker ready"), request_idx: expect.any(Number) });
    expect(await workers(id)).toEqual([expect.objectContaining({ status: "creating" })]);
    // A creating worker bills its storage only (the vendor's billing by state); compute from when it loads.
    const [creating] = await workers(id);
    const rented = emu.marketplace.instances.all().find((i) => i.id === creating.id)!;
    const charged = () => emu.marketplace.billing.itemsOf(emu.marketplace.seededUser.id).filter((item) => item.instanceId === rented.id).reduce((sum, item) => sum + item.amount, 0);
    const storagePerMs = storagePerHour(rented.offer, diskOf(rented)) / 3_600_000;
    emu.marketplace.clock.advance(emu.marketplace.lifecycle.provisioningMs);
    emu.marketplace.settle();
    expect(charged()).toBeCloseTo(storagePerMs * emu.marketplace.lifecycle.provisioningMs, 12);
    emu.marketplace.clock.advance(1000);
    emu.marketplace.settle();
    expect(charged()).toBeCloseTo(storagePerMs * (emu.marketplace.lifecycle.provisioningMs + 1000) + (rented.pricePerHour * 1000) / 3_600_000, 12);
    boot();
    const again = await route({ cost: 100, request_idx: first.body.request_idx });
    expect(again.body).toMatchObject({ url: expect.stringMatching(/^http:\/\//), reqnum: 1, request_idx: first.body.request_idx, signature: expect.any(String) });
    const pem = (await fetch(`${emu.url}/pubkey/`)).text();
    const signed = JSON.stringify({ url: again.body.url }, null, 4);
    expect(createVerify("sha256").update(signed).verify(await pem, again.body.signature, "base64")).toBe(true);
    // The check a model server makes (the SDK's): for its own URL only.
    expect(verifyRouteSignature(await pem, again.body, again.body.url)).toBe(true);
    expect(verifyRouteSignature(await pem, again.body, "http://127.0.0.1:1")).toBe(false);

    // A burst: the load asks for more than the cap; the workers grow to 3 and no further.
    const burst = await Promise.all(Array.from({ length: 40 }, () => route({ cost: 100 })));
    expect(burst.every((r) => r.status === 200)).toBe(true);
    // The autoscaler's next look (here, the workers' listing) sees the load.
    expect((await workers(id)).length).toBe(3);
    boot();
    await route({ cost: 100 });
    expect((await workers(id)).map((w) => w.status)).toEqual(["ready", "ready", "ready"]);

    // No request for the inactivity timeout (and the held load gone): every worker goes, billing nothing.
    emu.marketplace.clock.advance(61_000);
    expect(await workers(id)).toEqual([]);
    const instances = (await api("GET", "/api/v1/instances/")).body.instances;
    expect(instances).toEqual([]);
    // The next request brings one back.
    expect((await route({})).body.status).toMatch(/No worker ready/);
    boot();
    expect((await route({})).body.url).toMatch(/^http/);
    expect((await workers(id)).length).toBe(1);
    const deleted = (await api("DELETE", `/api/v0/endptjobs/${id}/`)).body;
    expect(deleted.deleted_workers).toHaveLength(1);
    expect((await api("GET", "/api/v1/instances/")).body.instances).toEqual([]);
  });

  it("scales on the load a worker reports (control API), replaces a worker that fails, and keeps a cold worker inactive, billing storage only", async () => {
    const id = await endpoint({ cold_workers: 2, max_workers: 3, inactivity_timeout: 60 });
    await group(id, await template());
    boot();
    const ready = await workers(id);
    expect(ready.map((w) => w.status).sort()).toEqual(["inactive", "ready"]);
    const inactive = ready.find((w) => w.status === "inactive")!;
    expect(emu.marketplace.instances.all().find((i) => i.id === inactive.id)!.intended).toBe("stopped");
    const active = ready.find((w) => w.status === "ready")!;
    // A reported load of 2,000 a second asks for 3 workers at 90 % of 1,000 each: the inactive one starts, a third is rented.
    expect((await call(emu.url, "POST", `/_emulator/workers/${active.id}/load`, { body: { load: 2000 } })).status).toBe(200);
    expect((await workers(id)).map((w) => w.status).sort()).toEqual(["creating", "loading", "ready"]);
    boot();
    expect((await workers(id)).map((w) => w.status)).toEqual(["ready", "ready", "ready"]);
    // Another fails: destroyed, and, the load still there, another rented in its place.
    const failing = (await workers(id)).find((w) => w.id !== active.id)!;
    expect((await call(emu.url, "POST", `/_emulator/workers/${failing.id}/fail`, { body: { msg: "CUDA out of memory" } })).status).toBe(200);
    const after = await workers(id);
    expect(after.map((w) => w.id)).not.toContain(failing.id);
    expect(after.map((w) => w.status).sort()).toEqual(["creating", "ready", "ready"]);
    expect(emu.marketplace.instances.all().map((i) => i.id)).not.toContain(failing.id);
    const logs = (await call(emu.url, "POST", "/get_endpoint_logs/", { key: emu.apiKey, body: { id } })).body.logs;
    expect(logs).toMatch(new RegExp(`worker ${failing.id} failed \\(CUDA out of memory\\)`));
    expect((await call(emu.url, "POST", "/_emulator/workers/42/load", { body: { load: 1 } })).status).toBe(404);
  });

  it("refuses a route without the endpoint's key or its owner's, and a worker report without its instance's key", async () => {
    await endpoint({});
    expect((await route({ api_key: "nope" })).status).toBe(401);
    expect((await call(emu.url, "POST", "/route/", { body: { endpoint: "other", api_key: emu.apiKey } })).status).toBe(400);
    const key = (await api("GET", "/api/v0/endptjobs/")).body.results[0].api_key;
    expect((await route({ api_key: key })).status).toBe(200);
    // The endpoint's key routes; it does not roll a worker group (an account key of the owner does).
    const groupId = await group((await api("GET", "/api/v0/endptjobs/")).body.results[0].id, await template());
    expect((await call(emu.url, "POST", "/update_workers/", { body: { workergroup_id: groupId, api_key: key } })).status).toBe(401);
    expect((await call(emu.url, "POST", "/update_workers/", { body: { workergroup_id: groupId, api_key: emu.apiKey } })).body).toMatchObject({ success: true, workers_to_update: 1 });
    expect((await call(emu.url, "POST", "/worker_status/", { body: { id: 5, mtoken: "x", cur_load: 1 } })).status).toBe(401);
  });
});
