import { direct, ENDPOINT, WORKER_GROUP } from "../../provider/lifecycle";
import { GpuRentalClient } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

const Endpoint = direct(ENDPOINT);
const WorkerGroup = direct(WORKER_GROUP);
const LOGIN = { docker_login_repo: "", docker_login_user: "", docker_login_pass: "" };

describe("Endpoint and WorkerGroup", () => {
  it("refuse at preview what the autoscaler could not keep, naming the input", () => {
    const endpoint = (news: Record<string, unknown>) => Endpoint.check(news).failures.map((f) => f.property);
    expect(endpoint({ name: "llm", coldWorkers: 1, maxWorkers: 3 })).toEqual([]);
    expect(endpoint({ name: "llm", coldWorkers: 4, maxWorkers: 3 })).toEqual(["maxWorkers"]);
    // The service keeps 5 cold workers unless told otherwise.
    expect(endpoint({ name: "llm", maxWorkers: 3 })).toEqual(["maxWorkers"]);
    expect(endpoint({ name: "llm", targetUtil: 1.5 })).toEqual(["targetUtil"]);
    expect(endpoint({ name: "llm", targetUtil: 0 })).toEqual(["targetUtil"]);
    const group = (news: Record<string, unknown>) => WorkerGroup.check(news).failures.map((f) => f.property);
    expect(group({ endpointId: 1, templateHash: "abc" })).toEqual([]);
    expect(group({ templateHash: "abc" })).toEqual(["endpointId"]);
    expect(group({ endpointId: 1 })).toEqual(["templateHash"]);
  });

  describe("over HTTP", () => {
    let emu: TestEmulator;
    let hash: string;
    beforeAll(async () => {
      emu = await emulator();
      const client = emu.client();
      hash = (await client.templates.create({ name: "model", image: "python", runtype: "ssh", env: "-p 8000:8000", onstart: "true", ...LOGIN })).hash_id;
    });
    afterAll(() => emu.close());
    const options = () => ({ client: emu.client() });
    const boot = () => emu.marketplace.clock.advance(emu.marketplace.lifecycle.provisioningMs + emu.marketplace.lifecycle.loadingMs + 1);

    it("create, change in place (a new template rolls the workers), import, and destroy with every worker", async () => {
      const spec = { name: "llm", coldWorkers: 1, maxWorkers: 2, inactivityTimeout: 60 };
      const made = await Endpoint.create(spec, options());
      expect(made.outs).toEqual({ ...spec, endpointId: Number(made.id), apiKey: expect.stringMatching(/^[0-9a-f]{48}$/) });
      const groupSpec = { endpointId: Number(made.id), templateHash: hash, gpuCount: 1, gpuRam: 8 };
      expect(await WorkerGroup.warnings(groupSpec, options())).toEqual([]);
      expect((await WorkerGroup.warnings({ ...groupSpec, gpuModel: "No Such GPU" }, options()))[0]).toMatch(/No offer matches/i);
      const group = await WorkerGroup.create(groupSpec, options());
      expect(group.outs).toMatchObject({ workerGroupId: Number(group.id), searchParams: "num_gpus=1" });
      // The one cold worker is rented at once, and boots.
      boot();
      const workers = () => emu.client().endpoints.workers(Number(made.id));
      expect((await workers()).map((w) => w.status)).toEqual(["ready"]);
      const first = (await workers())[0].id;
      // The group's own workers (`/get_workergroup_workers/`): the endpoint's, as it has one group.
      expect((await emu.client().workerGroups.workers(Number(group.id))).map((w) => [w.id, w.status])).toEqual([[first, "ready"]]);

      expect(Endpoint.diff(made.outs, { ...spec, maxWorkers: 3 })).toEqual({ changes: true, replaces: [], updates: ["maxWorkers"], deleteBeforeReplace: false });
      const bigger = await Endpoint.update(made.id, made.outs, { ...spec, maxWorkers: 3 }, options());
      expect(bigger).toMatchObject({ maxWorkers: 3, endpointId: Number(made.id) });
      expect(emu.marketplace.serverless.endpoint(emu.marketplace.seededUser.id, Number(made.id)).maxWorkers).toBe(3);

      // A new template: the worker is replaced by one of the new version, which serves before the old one goes.
      const edited = (await emu.client().templates.create({ name: "model", image: "python", runtype: "ssh", env: "-p 8000:8000", onstart: "echo v2", ...LOGIN })).hash_id;
      expect((await WorkerGroup.diff(group.outs, { ...groupSpec, templateHash: edited })).updates).toEqual(["templateHash"]);
      expect((await WorkerGroup.diff(group.outs, { ...groupSpec, endpointId: 99 })).replaces).toEqual(["endpointId"]);
      await WorkerGroup.update(group.id, group.outs, { ...groupSpec, templateHash: edited }, options());
      expect((await workers()).map((w) => w.status).sort()).toEqual(["creating", "updating"]);
      boot();
      const rolled = await workers();
      expect(rolled.map((w) => w.status)).toEqual(["ready"]);
      expect(rolled[0].id).not.toBe(first);

      expect(await Endpoint.import(made.id, options())).toMatchObject({ inputs: { name: "llm", coldWorkers: 1, maxWorkers: 3, targetUtil: 0.9, inactivityTimeout: 60 } });
      expect(await WorkerGroup.import(group.id, options())).toMatchObject({ inputs: { endpointId: Number(made.id), templateHash: edited, filters: { num_gpus: { eq: 1 } }, gpuRam: 8 } });

      // The autoscaler's own calls go to the client's autoscalerUrl (the live service's run.vast.ai); the API's to apiUrl.
      const split = new GpuRentalClient({ apiUrl: "http://127.0.0.1:9", apiKey: emu.apiKey, autoscalerUrl: emu.url, retries: 0 });
      expect((await split.endpoints.workers(Number(made.id))).map((w) => w.status)).toEqual(["ready"]);
      // An endpoint's log names the endpoint by its name too, which the API's listing gives: a group's log does not need it.
      expect(await split.workerGroups.logs(Number(group.id))).toEqual(expect.any(String));
      await expect(split.endpoints.logs(Number(made.id))).rejects.toThrow(/from http:\/\/127\.0\.0\.1:9/);
      expect(await emu.client().endpoints.logs(Number(made.id))).toMatch(/rented/);
      await expect(split.endpoints.list()).rejects.toThrow(/from http:\/\/127\.0\.0\.1:9/);

      await WorkerGroup.delete(group.id, options());
      await Endpoint.delete(made.id, options());
      expect(await Endpoint.read(made.id, bigger, options())).toBeNull();
      expect(await emu.client().instances.list()).toEqual([]);
    });
  });
});
