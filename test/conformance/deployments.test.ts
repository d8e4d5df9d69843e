import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { gzipSync } from "node:zlib";
import { Clock } from "../../emulator";
import { BadRequestError, pushDeployment, uploadBundle } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * Deployments through the SDK against an in-process emulator without machines (a worker serves once its instance
 * runs): what a push does (made, nothing new, new scaling, new code), what is refused before anything is made or
 * changed (bad input, an upload that is not the announced bundle), the time to live on the emulator's clock, and a
 * deletion that leaves nothing. test/compat/deployments.test.ts runs real code on real workers.
 */
describe("deployments through the SDK", () => {
  let emu: TestEmulator;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-deployment-code-"));
  const code = (body: string) => fs.writeFileSync(path.join(folder, "__init__.py"), `from vastai.serverless.remote import Deployment\napp = Deployment(name="echo")\n# ${body}\n`);
  const spec = () => ({ name: "echo", codeFolder: folder, image: "vastai/base-image:latest", scaling: { min_load: 1, cold_workers: 0, max_workers: 1 } });

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 20, loadingMs: 20 } });
  });
  afterAll(async () => {
    await emu.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it("pushes a folder and waits until it serves; unchanged code changes nothing; new scaling in place; new code a new version", async () => {
    const client = emu.client();
    code("v1");
    const first = await pushDeployment(client, spec(), { wait: true, pollMs: 50 });
    expect(first.action).toBe("created");
    expect(first.deployment).toMatchObject({ name: "echo", tag: "default", current_version_id: first.deployment.last_healthy_version_id, endpoint_state: "active" });
    const id = first.deployment.id;
    expect(await pushDeployment(client, spec())).toMatchObject({ action: "exists", hash: first.hash });
    expect(await pushDeployment(client, { ...spec(), scaling: { ...spec().scaling, max_workers: 2 } })).toMatchObject({ action: "autoscale_update" });
    expect((await client.endpoints.get(first.deployment.endpoint_id!))?.max_workers).toBe(2);
    code("v2");
    const second = await pushDeployment(client, spec(), { wait: true, pollMs: 50 });
    expect(second).toMatchObject({ action: "soft_update", deployment: { id } });
    expect(second.deployment.current_version_id).not.toBe(first.deployment.current_version_id);
    expect((await client.deployments.versions(id)).map((v) => v.status)).toEqual(["healthy", "healthy"]);
    // Five versions keep their bundle: the oldest beyond them are evicted (never the current nor the last healthy).
    for (const n of [3, 4, 5, 6]) {
      code(`v${n}`);
      await pushDeployment(client, spec(), { wait: true, pollMs: 50 });
    }
    expect((await client.deployments.versions(id)).map((v) => v.status)).toEqual(["evicted", "healthy", "healthy", "healthy", "healthy", "healthy"]);
    expect(await client.deployments.delete(id)).toEqual([id]);
    expect(await client.deployments.get(id)).toBeNull();
  });

  it("refuses bad input before anything is made, and an upload that is not the bundle announced", async () => {
    const client = emu.client();
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-empty-"));
    await expect(pushDeployment(client, { ...spec(), codeFolder: empty })).rejects.toThrow(/has no files/);
    fs.rmSync(empty, { recursive: true });
    await expect(pushDeployment(client, { ...spec(), codeFolder: path.join(folder, "missing") })).rejects.toThrow(/cannot be read/);
    await expect(pushDeployment(client, { ...spec(), image: "" })).rejects.toThrow(/image/);
    await expect(pushDeployment(client, { ...spec(), searchParams: "gpu_name=" })).rejects.toThrow(BadRequestError);
    await expect(pushDeployment(client, { ...spec(), scaling: { target_util: 2 } })).rejects.toThrow(/target_util/);
    expect(await client.deployments.list()).toEqual([]);
    expect(await client.endpoints.list()).toEqual([]);

    // The put announces one bundle; another of the same size is refused, and the version still waits for its own.
    const bundle = gzipSync(Buffer.from("not a tar at all"));
    const answer = await client.deployments.put({ name: "x", image: "img", file_hash: "a".repeat(64), file_size: bundle.length });
    await expect(uploadBundle(answer, bundle)).rejects.toThrow(/not a gzipped tar|content hash|Not the bundle/);
    await expect(uploadBundle(answer, Buffer.concat([bundle, Buffer.from("x")]))).rejects.toThrow(/bytes; the put announced/);
    expect((await client.deployments.versions(answer.deployment_id)).map((v) => v.status)).toEqual(["pending_upload"]);
    expect(await client.deployments.deleteByName("x")).toEqual([answer.deployment_id]);
    expect(await client.workerGroups.list()).toEqual([]);
  });

  it("a deployment with no heartbeat for its time to live is deleted, with everything it made", async () => {
    const client = emu.client();
    code("ttl");
    const pushed = await pushDeployment(client, { ...spec(), name: "short", ttl: 60 }, { wait: true, pollMs: 50 });
    emu.marketplace.clock.advance(40_000);
    await client.deployments.heartbeat(pushed.deployment.id);
    emu.marketplace.clock.advance(40_000);
    emu.marketplace.settle();
    expect(await client.deployments.get(pushed.deployment.id)).not.toBeNull();
    emu.marketplace.clock.advance(61_000);
    emu.marketplace.settle();
    expect(await client.deployments.get(pushed.deployment.id)).toBeNull();
    expect(await client.endpoints.list()).toEqual([]);
    expect((await http(emu.url, "GET", "/api/v1/instances/", { key: emu.apiKey })).body.instances ?? []).toEqual([]);
  });
});
