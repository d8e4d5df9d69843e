import { Clock } from "../../emulator";
import { route, RouteTimeoutError } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

/**
 * docs/serverless.md's endpoint with its placeholder model server (`python3 -m my_server`, which this machine does
 * not have): its worker's start command fails at once and nothing ever serves. The route gives up when its timeout
 * says, and says why, in the endpoint log's words: the start command's exit and the last lines of its output.
 */
describe("a route whose workers never become ready", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 100, loadingMs: 200 }, ssh: true });
  });
  afterAll(async () => emu?.close());

  it("says the start command's exit and the tail of its output, from the machine's log", async () => {
    const client = emu.client();
    const template = await client.templates.create({
      name: "my-model", image: "vllm/vllm-openai", tag: "latest", runtype: "ssh", env: "-p 8000:8000", onstart: "nohup python3 -m my_server --port 8000 &", docker_login_repo: "", docker_login_user: "", docker_login_pass: "",
    });
    const endpoint = await client.endpoints.create({ endpoint_name: "llm", min_load: 0, cold_workers: 0, max_workers: 4, inactivity_timeout: 300 });
    await client.workerGroups.create({ endpoint_id: endpoint.id, template_hash: template.hash_id, search_params: "num_gpus=1", gpu_ram: 8 });

    const error = await route(client, "llm", { prompt: "hello" }, { timeoutMs: 10_000, maxBackoffMs: 1_000 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(RouteTimeoutError);
    expect((error as Error).message).toMatch(
      /^No worker of endpoint llm answered in 10000 ms \(last: .*\)\. The endpoint's log says: .*worker \d+ will not be ready: its start command \(onstart\) exited \d+ and nothing answers on its port; its output ends: .*No module named my_server/,
    );
    // The log the message quotes is the endpoint's own, which a user reads the same way.
    expect(await client.endpoints.logs(endpoint.id)).toMatch(/will not be ready: its start command \(onstart\) exited/);
    await client.endpoints.delete(endpoint.id);
  }, 120_000);
});
