import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Clock, startEmulator } from "../../emulator";
import { GpuRentalClient, TemplateResponse } from "../../sdk";
import { REPO_ROOT } from "../helpers/provider-host";

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-data-"));

describe("--data-dir", () => {
  it("keeps instances, keys, credit and the clock across a restart", async () => {
    const dataDir = tempDir();
    const first = await startEmulator({ dataDir, apiKey: "durable-key-1", clock: new Clock("frozen") });
    const client = new GpuRentalClient({ apiUrl: first.url, apiKey: first.apiKey });
    const [offer] = await client.searchOffers({ limit: 1 });
    const { new_contract: id, instance_api_key: instanceKey } = await client.createInstance(offer.id, { image: "x", label: "kept" });
    await client.updateInstance(id, { label: "relabelled" });
    await fetch(`${first.url}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"ms":3600000}' });
    const creditBefore = (await client.currentUser()).credit;
    await first.close();

    const second = await startEmulator({ dataDir, apiKey: "durable-key-1", clock: new Clock("frozen") });
    const again = new GpuRentalClient({ apiUrl: second.url, apiKey: "durable-key-1" });
    expect(await again.getInstance(id)).toMatchObject({ id, label: "relabelled", actual_status: "running" });
    expect((await again.currentUser()).credit).toBeCloseTo(creditBefore, 6);
    expect(await again.searchOffers({ filters: { id: { eq: offer.id } } })).toEqual([]);
    // The instance key still works on its own instance; the file holds no key in plaintext.
    await new GpuRentalClient({ apiUrl: second.url, apiKey: instanceKey! }).updateInstance(id, { state: "stopped" });
    await second.close();
  });

  it("seals the file: nothing in it is readable without the key beside it, which only its owner can read", async () => {
    const dataDir = tempDir();
    const emu = await startEmulator({ dataDir, apiKey: "sealed-key-123" });
    const client = new GpuRentalClient({ apiUrl: emu.url, apiKey: emu.apiKey });
    await client.call({
      method: "POST",
      path: "/api/v0/template/",
      body: { name: "private-registry", image: "ghcr.io/acme/trainer", docker_login_repo: "ghcr.io", docker_login_user: "acme", docker_login_pass: "registry-token-42" },
      schema: TemplateResponse,
    });
    await emu.close();
    const text = fs.readFileSync(path.join(dataDir, "state.json"), "utf8");
    for (const secret of ["sealed-key-123", "registry-token-42", "demo@gpu-rental.test", "private-registry"]) expect(text).not.toContain(secret);
    expect(fs.statSync(path.join(dataDir, "state.key")).mode & 0o077).toBe(0);
    expect(fs.statSync(path.join(dataDir, "state.json")).mode & 0o077).toBe(0);
  });

  it("lets settings given on the command line win over saved ones, and keeps changed rate limits", async () => {
    const dataDir = tempDir();
    const first = await startEmulator({ dataDir, contention: 0.25, lifecycle: { loadingMs: 1234 } });
    await fetch(`${first.url}/_emulator/settings`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ rateLimits: { offer_search: { limit: 7, windowMs: 60000 } } }),
    });
    await first.close();
    const second = await startEmulator({ dataDir, contention: 0.5 });
    expect(second.marketplace.contention).toBe(0.5);
    expect(second.marketplace.lifecycle.loadingMs).toBe(1234);
    expect(second.marketplace.rateLimits.settings.offer_search).toEqual({ limit: 7, windowMs: 60000 });
    await second.close();
  });

  it("refuses a second emulator on a folder in use", async () => {
    const dataDir = tempDir();
    const first = await startEmulator({ dataDir });
    await expect(startEmulator({ dataDir })).rejects.toThrow(/in use by another emulator/);
    await first.close();
    const again = await startEmulator({ dataDir });
    await again.close();
  });

  it("loses no acknowledged change when killed with SIGKILL in the middle of writes", async () => {
    const dataDir = tempDir();
    const key = "kill-nine-key-1";
    let emulator = await spawnEmulator(dataDir, key);
    const client = new GpuRentalClient({ apiUrl: emulator.url, apiKey: key, retries: 0 });
    const offers = await client.searchOffers({ limit: 300 });
    const acknowledged: number[] = [];
    let killed = false;
    // Eight clients create instances as fast as they can; the emulator is killed once 40 creations are acknowledged.
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let i = worker; i < offers.length && !killed; i += 8) {
          try {
            const created = await client.createInstance(offers[i].id, { image: "x", label: `n${i}` });
            acknowledged.push(created.new_contract);
            if (acknowledged.length >= 40 && !killed) {
              killed = true;
              emulator.process.kill("SIGKILL");
            }
          } catch {
            // refused or cut off by the kill: not acknowledged, so not required to survive
          }
        }
      }),
    );
    await new Promise((resolve) => emulator.process.once("exit", resolve));
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, "state.json"), "utf8")).format).toBe("gpu-rental-state/2");

    emulator = await spawnEmulator(dataDir, key);
    const after = new GpuRentalClient({ apiUrl: emulator.url, apiKey: key });
    const surviving = new Set((await after.listInstances()).map((i) => i.id));
    for (const id of acknowledged) expect(surviving).toContain(id);
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);
    emulator.process.kill("SIGKILL");
  });
});

/** The `gpu-rental emulator` command, as users run it; resolves once it prints its URL. */
async function spawnEmulator(dataDir: string, key: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "emulator", "--data-dir", dataDir, "--api-key", key], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /GPU_RENTAL_API_URL=(\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`emulator exited ${code}`)));
  });
  return { url, process: child };
}
