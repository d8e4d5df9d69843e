import * as http from "node:http";

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Every round trip's time, sorted (to combine runs). */
  latenciesMs: number[];
}

/**
 * Sends the same request over `connections` keep-alive connections for `seconds`, one request in flight per
 * connection, and measures each round trip. Bounded in time: it stops by itself.
 */
export async function load(url: string, options: { method: string; headers: Record<string, string>; body: string; connections: number; seconds: number }): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  let errors = 0;
  const started = process.hrtime.bigint();
  const deadline = started + BigInt(Math.round(options.seconds * 1e9));
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = process.hrtime.bigint();
      const req = http.request(url, { method: options.method, headers: options.headers, agent }, (res) => {
        res.on("data", () => undefined);
        res.on("end", () => {
          if (res.statusCode === 200) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          else errors++;
          resolve();
        });
      });
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end(options.body);
    });
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (process.hrtime.bigint() < deadline) await one();
    }),
  );
  agent.destroy();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return summarize(latencies, seconds, errors);
}

/** Runs measured apart, as one: their requests over their total time, and the percentiles of all round trips. */
export function combine(results: LoadResult[]): LoadResult {
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  return summarize(results.flatMap((r) => r.latenciesMs), seconds, results.reduce((sum, r) => sum + r.errors, 0));
}

function summarize(latencies: number[], seconds: number, errors: number): LoadResult {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50Ms: at(0.5), p99Ms: at(0.99), errors, latenciesMs: latencies };
}
