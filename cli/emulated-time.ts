import type { Clock } from "../sdk";

/**
 * Time for rehearsing a long job on the emulator (`gpu-rental job run --emulated-time`, docs/jobs.md): a pause moves
 * the emulator's clock through its control API (docs/control-api.md) instead of waiting, a step at a time, and after
 * each step waits (real time, bounded) until the emulated machines' processes have caught up with it (each waits in
 * a `sleep` again, or its machine is down). So six hours of a job, its outbids and its machines' work, pass in
 * seconds, in the order they would take.
 */
export interface EmulatedTimeOptions {
  /** The longest step the clock is moved by at once. Default 60 s: a job's loop that sleeps a minute misses none. */
  stepMs?: number;
  /** The emulator's control token (`--control-token`), if it has one. */
  controlToken?: string;
  /** How long (real ms) a step waits for the machines at most. Default 10 s. */
  settleMs?: number;
}

interface MachineView {
  up: boolean;
  sleeping_until: number[];
}

export async function emulatedTime(apiUrl: string, options: EmulatedTimeOptions = {}): Promise<Clock> {
  const base = apiUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { "content-type": "application/json", ...(options.controlToken && { "x-emulator-token": options.controlToken }) };
  const control = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(base + path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
    if (!res.ok) throw new Error(`the emulator's control API answered ${res.status} to ${method} ${path}: ${(await res.text()).slice(0, 300)} (--emulated-time needs an emulator with its control API)`);
    return (await res.json()) as T;
  };
  let now = (await control<{ now: number }>("GET", "/_emulator/state")).now;
  const step = options.stepMs ?? 60_000;
  const settleMs = options.settleMs ?? 10_000;

  /**
   * Until every machine that is up has a process waiting on the clock past `now` (or the bound passes). After a
   * step (`booted`), an instance still loading waits for its machine to come up too: the step took it past its boot.
   */
  const settle = async (booted: boolean) => {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const { instances } = await control<{ instances: { id: number; actual_status: string | null; intended_status: string }[] }>("GET", "/_emulator/state");
      const views = await Promise.all(instances.map((i) => control<MachineView>("GET", `/_emulator/instances/${i.id}/machine`).catch(() => undefined)));
      const booting = booted && instances.some((i, n) => views[n] && !views[n]!.up && i.intended_status === "running" && i.actual_status === "loading");
      const busy = booting || views.some((v) => v?.up && !v.sleeping_until.some((s) => s * 1000 > now));
      if (!busy || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    now: () => now,
    sleep: async (ms) => {
      for (let left = ms; left > 0; left -= step) {
        await settle(false);
        now = (await control<{ now: number }>("POST", "/_emulator/clock/advance", { ms: Math.min(step, left) })).now;
        await settle(true);
      }
    },
  };
}
