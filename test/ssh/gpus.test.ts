import { http, TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, instance, registerKey, sshEmulator, userKey } from "./machines";
import { exec } from "../../sdk";
import { scratch } from "../helpers/paths";

/** Every machine that runs onstart has an nvidia-smi on its PATH, answering what the control API sets. */
describe("emulated nvidia-smi", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  const QUERY = "nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits";

  beforeAll(async () => {
    work = scratch("gpus");
    key = userKey(work.dir);
    emu = await sshEmulator(work.dir);
    await registerKey(emu, key.publicKey);
  });
  afterAll(async () => {
    await emu?.close();
    work?.remove();
  });

  it("reports busy GPUs by default (in onstart), then what the control API sets, one line per GPU", async () => {
    const id = await createInstance(emu, { onstart: `${QUERY}; nvidia-smi -L | wc -l` });
    const view = await bootToRunning(emu, id);
    const gpus: number = view.num_gpus;
    const machine = (await http(emu.url, "GET", `/_emulator/instances/${id}/machine`)).body;
    const memory = Math.round(0.9 * view.gpu_ram);
    expect(machine.onstart.output).toBe(`${"100, " + memory + "\n".repeat(1)}`.repeat(gpus) + `${gpus}\n`);
    expect(machine.gpus).toEqual({ utilization: Array(gpus).fill(100), memory_used_mib: Array(gpus).fill(memory) });

    const set = await http(emu.url, "PUT", `/_emulator/instances/${id}/gpus`, { body: { utilization: 0, memory_used_mib: 12 } });
    expect(set.status).toBe(200);
    const run = (command: string) => exec(view, command, { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey, timeoutMs: 30_000 });
    expect((await run(QUERY)).stdout).toBe("0, 12\n".repeat(gpus));
    // With header and units, as a person reads it.
    expect((await run("nvidia-smi --query-gpu=index,utilization.gpu --format=csv")).stdout).toBe(
      "index, utilization.gpu [%]\n" + Array.from({ length: gpus }, (_, i) => `${i}, 0 %\n`).join(""),
    );
    const bad = await run("nvidia-smi --query-gpu=temperature.gpu --format=csv");
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("temperature.gpu");
  }, 120_000);

  it("refuses values that do not fit the machine, and instances of runtype args (no machine)", async () => {
    const id = await createInstance(emu);
    const gpus = (await instance(emu, id)).num_gpus;
    const wrongCount = await http(emu.url, "PUT", `/_emulator/instances/${id}/gpus`, { body: { utilization: Array(gpus + 1).fill(5) } });
    expect(wrongCount).toMatchObject({ status: 400, body: { error: "invalid_args" } });
    expect(wrongCount.body.msg).toContain(`${gpus}`);
    expect((await http(emu.url, "PUT", `/_emulator/instances/${id}/gpus`, { body: { utilization: 101 } })).status).toBe(400);
    const args = await createInstance(emu, { runtype: "args" });
    const refused = await http(emu.url, "PUT", `/_emulator/instances/${args}/gpus`, { body: { utilization: 0 } });
    expect(refused).toMatchObject({ status: 400, body: { error: "invalid_args" } });
    expect(refused.body.msg).toContain("args");
    expect((await http(emu.url, "PUT", "/_emulator/instances/99/gpus", { body: { utilization: 0 } })).status).toBe(404);
  }, 60_000);
});
