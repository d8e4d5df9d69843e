/**
 * What an emulated machine's start costs (emulator/sandbox/machines.ts): from the moment its instance is due to
 * run to the moment its SSH is served, for a first boot (a fresh machine) and for a boot again after a stop (its
 * files kept), in wall time and in CPU (this process's and its children's: the machines' own processes), against
 * the baseline of one shell started and waited for in the same run.
 *
 *   npm run bench:machine-start          (BENCH_MACHINES=10 by default)
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { Clock, startEmulator } from "../emulator";
import { runBench } from "./run";

const MACHINES = Number(process.env.BENCH_MACHINES ?? 10);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** CPU seconds of this process and of the children it has waited for (Linux: /proc/self/stat, in clock ticks). */
function cpuSeconds(): number {
  const fields = fs.readFileSync("/proc/self/stat", "utf8").replace(/^.*\) /s, "").split(" ");
  // utime, stime, cutime, cstime: the line's fields 14 to 17.
  return fields.slice(11, 15).map(Number).reduce((a, b) => a + b, 0) / 100;
}

const shell = () => new Promise<void>((resolve, reject) => spawn("/bin/sh", ["-c", "true"]).on("exit", () => resolve()).on("error", reject));

runBench(async () => {
  const emulator = await startEmulator({ ssh: true, clock: new Clock("frozen"), lifecycle: { provisioningMs: 0, loadingMs: 0 } });
  try {
    if (!emulator.machines.onstart) throw new Error(`the emulator runs without machines here: ${emulator.machines.why}`);
    const machines = emulator.ssh!.machines;
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${emulator.url}${url}`, { method, headers: { authorization: `Bearer ${emulator.apiKey}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      return res.json();
    };
    const up = async (id: number) => {
      const started = performance.now();
      for (;;) {
        const instance = emulator.marketplace.instances.byId(id)!;
        emulator.marketplace.settle();
        if (machines.isUp(instance)) return performance.now() - started;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    };
    const offers = (await call("POST", "/api/v0/bundles/", { limit: MACHINES, order: [["dph_total", "asc"]] })).offers;
    const baseline: number[] = [];
    for (let i = 0; i < MACHINES * 3; i++) {
      const started = performance.now();
      await shell();
      baseline.push(performance.now() - started);
    }
    const runs: Record<"first" | "again", number[]> = { first: [], again: [] };
    const ids: number[] = [];
    const cpuBefore = cpuSeconds();
    for (const offer of offers) {
      const id = (await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu:22.04", runtype: "ssh_direct", onstart: "echo ready > ready.txt" })).new_contract;
      runs.first.push(await up(id));
      ids.push(id);
    }
    for (const id of ids) await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
    for (const id of ids) {
      await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      runs.again.push(await up(id));
    }
    for (const id of ids) await call("DELETE", `/api/v0/instances/${id}/`);
    // The machines' processes counted once they have ended and been waited for.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cpuPerBoot = (cpuSeconds() - cpuBefore) / (2 * MACHINES);
    const shellMs = median(baseline);
    console.log(`machines: ${MACHINES}; one shell started and waited for: ${shellMs.toFixed(1)} ms (median)`);
    for (const kind of ["first", "again"] as const) {
      const ms = median(runs[kind]);
      console.log(`${kind === "first" ? "first boot  " : "boot again  "} median ${ms.toFixed(1).padStart(7)} ms (${(ms / shellMs).toFixed(1)}x a shell)`);
    }
    console.log(`CPU: ${(cpuPerBoot * 1000).toFixed(0)} ms a boot (this process and its children, stops and destroys included)`);
  } finally {
    await emulator.close();
  }
});
