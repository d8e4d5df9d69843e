/**
 * Serverless routing on the emulator: what `/route/` adds to a request (p50 and p95 of a request sent through the
 * workflow library's `route` against the same request sent straight to the worker, in one run), and a cold start:
 * from the first request to an endpoint at zero workers to its answer, in emulated boot times (the instance's
 * provisioning and loading, as the emulator's lifecycle sets them). The workers are the example's model server
 * (examples/serverless/model_server.py), really serving on emulated machines.
 *
 *   npm run bench:route          (BENCH_REQUESTS=200 by default)
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { startEmulator } from "../emulator";
import { GpuRentalClient, route, RouteResponse } from "../sdk";
import { runBench } from "./run";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const LIFECYCLE = { provisioningMs: 1_000, loadingMs: 2_000 };
const SERVER = fs.readFileSync(path.join(__dirname, "..", "examples", "serverless", "model_server.py"), "utf8");

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

async function timed(send: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await send();
  return performance.now() - started;
}

runBench(async () => {
  const emulator = await startEmulator({ ssh: true, rateLimits: "off", lifecycle: LIFECYCLE });
  try {
    if (!emulator.machines.onstart) throw new Error(`the emulator runs without machines here: ${emulator.machines.why}`);
    const client = new GpuRentalClient({ apiUrl: emulator.url, apiKey: emulator.apiKey });
    const template = await client.templates.create({
      name: "bench-model", image: "python", runtype: "ssh", env: "-p 8000:8000", docker_login_repo: "", docker_login_user: "", docker_login_pass: "",
      onstart: `cat > model_server.py <<'PY'\n${SERVER}PY\nnohup python3 model_server.py > model_server.log 2>&1 &\n`,
    });
    const endpoint = await client.endpoints.create({ endpoint_name: "bench", cold_workers: 0, min_load: 0, max_workers: 1, inactivity_timeout: 600 });
    await client.workerGroups.create({ endpoint_id: endpoint.id, template_hash: template.hash_id, search_params: "num_gpus=1", gpu_ram: 8 });

    const boot = LIFECYCLE.provisioningMs + LIFECYCLE.loadingMs;
    const cold = await timed(() => route(client, "bench", { prompt: "cold" }, { maxBackoffMs: 200 }));

    const viaRoute: number[] = [];
    for (let i = 0; i < REQUESTS; i++) viaRoute.push(await timed(() => route(client, "bench", { prompt: `r${i}` })));
    // The same requests straight to the worker, with a route's signed answer (the worker checks the signature).
    const answer = await client.call({ method: "POST", path: "/route/", body: { endpoint: "bench", cost: 100 }, schema: RouteResponse });
    const auth = { cost: answer.cost, endpoint: answer.endpoint, reqnum: answer.reqnum, signature: answer.signature, url: answer.url };
    const direct: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      direct.push(
        await timed(async () => {
          const res = await fetch(answer.url!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ auth_data: auth, payload: { prompt: `d${i}` } }) });
          if (res.status !== 200) throw new Error(`the worker answered ${res.status}: ${await res.text()}`);
          await res.text();
        }),
      );
    }
    const row = (name: string, values: number[]) => `${name.padEnd(22)} p50 ${percentile(values, 50).toFixed(2).padStart(7)} ms   p95 ${percentile(values, 95).toFixed(2).padStart(7)} ms`;
    console.log(`requests: ${REQUESTS} each way, one worker (examples/serverless/model_server.py)`);
    console.log(row("direct to the worker", direct));
    console.log(row("through route()", viaRoute));
    console.log(`route overhead: p50 ${(percentile(viaRoute, 50) - percentile(direct, 50)).toFixed(2)} ms (${(percentile(viaRoute, 50) / percentile(direct, 50)).toFixed(2)}x), p95 ${(percentile(viaRoute, 95) - percentile(direct, 95)).toFixed(2)} ms (${(percentile(viaRoute, 95) / percentile(direct, 95)).toFixed(2)}x)`);
    console.log(`cold start from zero workers: ${cold.toFixed(0)} ms, ${(cold / boot).toFixed(2)} emulated boot times (a boot: ${boot} ms of provisioning and loading)`);
  } finally {
    await emulator.close();
  }
});
