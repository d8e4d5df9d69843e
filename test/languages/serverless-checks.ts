import * as fs from "node:fs";
import * as path from "node:path";
import { EndpointWorker, GpuRentalClient, route, Routed, RouteResponse } from "../../sdk";
import type { DocMachine } from "./doc-program";
import { REPO_ROOT } from "../helpers/paths";

/**
 * Serverless inference as code (issue 40's acceptance), the same checks for every language: a program's endpoint
 * and worker group, deployed by the real engine against an emulator whose workers really serve (the example's model
 * server, which checks each request's signature), judged over HTTP and the control API only, as a user's CI could.
 */
export interface ServerlessDeployment {
  url: string;
  /** The account's key. */
  apiKey: string;
  endpointName: string;
  /** The endpoint's cap, which the program declares. */
  maxWorkers: number;
  /** Its inactivity timeout, seconds. */
  inactivityTimeout: number;
  /** Deploys the program again with another `modelVersion` (its template edited): the workers roll. */
  redeploy(modelVersion: string): Promise<void>;
}

interface Answer {
  reply: string;
  worker: number;
  version: string;
}

export async function checkServerless(deployment: ServerlessDeployment): Promise<void> {
  const client = new GpuRentalClient({ apiUrl: deployment.url, apiKey: deployment.apiKey, minRetryDelayMs: 5 });
  const [endpoint] = (await client.endpoints.list()).filter((e) => e.endpoint_name === deployment.endpointName);
  expect(endpoint).toBeDefined();
  const send = (prompt: string, cost = 100) => route<Answer>(client, deployment.endpointName, { prompt }, { cost, endpointKey: endpoint.api_key, maxBackoffMs: 300, timeoutMs: 120_000 });

  // 50 requests, ten at a time: every one answered by the model server, which refuses a request not signed for it.
  const answers: Routed<Answer>[] = [];
  for (let batch = 0; batch < 5; batch++) answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => send(`prompt ${batch * 10 + i}`)))));
  expect(answers.map((a) => a.body.reply)).toEqual(Array.from({ length: 50 }, (_, i) => `echo: prompt ${i}`));
  expect(new Set(answers.map((a) => a.reqnum)).size).toBe(50);
  // A request whose signature does not hold is refused by the server itself (a worker just routed to: it holds the
  // request's load, so no scale-down stops it meanwhile).
  // The route names a worker once one has room (the loads the batches above left may fill every worker for a
  // moment): until then it is asked again under its request_idx, as a client does.
  const ask = (requestIdx?: number) =>
    client.call({ method: "POST", path: "/route/", body: { endpoint: deployment.endpointName, api_key: endpoint.api_key, ...(requestIdx !== undefined && { request_idx: requestIdx }) }, schema: RouteResponse });
  let routed = await ask();
  for (let asks = 1; !routed.signature && asks < 600; asks++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    routed = await ask(routed.request_idx);
  }
  expect(routed).toMatchObject({ url: expect.any(String), signature: expect.any(String) });
  const forged = await fetch(routed.url!, { method: "POST", body: JSON.stringify({ auth_data: { ...routed, signature: routed.signature!.replace(/^.{8}/, "AAAAAAAA") }, payload: { prompt: "x" } }) });
  expect(forged.status).toBe(401);

  // A burst asks for more than the cap: the workers grow to it, never beyond.
  let peak = 0;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      peak = Math.max(peak, (await client.endpoints.workers(endpoint.id)).length);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => send(`burst ${i}`, 2000)));
  watching = false;
  await watch;
  expect(burst.every((a, i) => a.body.reply === `echo: burst ${i}`)).toBe(true);
  expect(peak).toBe(deployment.maxWorkers);

  // Idle past the inactivity timeout (on the emulator's clock): no worker, no instance, nothing billing compute.
  await control(deployment.url, "/_emulator/clock/advance", { ms: (deployment.inactivityTimeout + 11) * 1000 });
  await eventually(async () => expect(await client.endpoints.workers(endpoint.id)).toEqual([]));
  expect(await client.instances.list()).toEqual([]);
  // The next request brings a worker back (a cold start), and is answered.
  expect((await send("after zero")).body.reply).toBe("echo: after zero");

  // A new model version rolls the workers while requests keep coming: none fails, and the new version answers.
  const versions: string[] = [];
  let rolling = true;
  const stream = (async () => {
    // One request every 50 ms or so: a steady stream, not a load test.
    for (let i = 0; rolling || !versions.includes("2"); i++) {
      versions.push((await send(`during ${i}`)).body.version);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await deployment.redeploy("2");
  await eventually(async () => expect(versions).toContain("2"));
  rolling = false;
  await stream;
  expect(versions[0]).toBe("1");
  // The roll ends with every worker of the new version ready (none `updating`).
  await eventually(async () => expect(states(await client.endpoints.workers(endpoint.id))).toEqual(["ready"]));
  const served = new Set(answers.map((a) => a.body.worker)).size;
  console.log(`serverless ${deployment.endpointName}: 50 answered by ${served} worker(s), burst peak ${peak}, ${versions.length} answered during the roll (${versions.filter((v) => v === "1").length} by version 1)`);
}

/** The workers' states, each once. */
function states(workers: EndpointWorker[]): string[] {
  return [...new Set(workers.map((w) => w.status))];
}

/** The example's model server, which the languages' programs run (examples/serverless/model_server.py). */
export const MODEL_SERVER = fs.readFileSync(path.join(REPO_ROOT, "examples", "serverless", "model_server.py"), "utf8");

/**
 * A language's serverless program deployed on a docs page's machine (its emulator serves workers), under an account of
 * its own, checked (checkServerless), then destroyed: nothing left. The program reads the config `model_version` and
 * declares the endpoint `<language>-echo` (at most 2 workers, 300 s of inactivity).
 */
export async function checkServerlessProgram(machine: DocMachine, url: string, language: string, files: Record<string, string>): Promise<void> {
  const owner = (await (await fetch(`${url}/_emulator/users`, { method: "POST", body: JSON.stringify({ email: `${language}-serverless@gpu-rental.test` }), headers: { "content-type": "application/json" } })).json()).api_key as string;
  const folder = `${language}-serverless`;
  // Quick boots while it runs (the page's emulator boots in 7 s): the checks wait on several cold starts.
  const settings = async (lifecycle: unknown) => fetch(`${url}/_emulator/settings`, { method: "PUT", body: JSON.stringify({ lifecycle }), headers: { "content-type": "application/json" } });
  const { lifecycle } = await (await fetch(`${url}/_emulator/state`)).json();
  await settings({ provisioningMs: 100, loadingMs: 200 });
  try {
    fs.mkdirSync(path.join(machine.home, folder));
    for (const [file, text] of Object.entries({ ...files, "model_server.py": MODEL_SERVER })) fs.writeFileSync(path.join(machine.home, folder, file), text);
    await machine.ok(`pulumi stack init dev && pulumi config set-all --plaintext gpu-rental:apiUrl=${url} --secret gpu-rental:apiKey=${owner}`, folder);
    expect(await machine.ok("pulumi up --yes", folder)).toMatch(/\+ 4 created/);
    await checkServerless({
      url, apiKey: owner, endpointName: `${language}-echo`, maxWorkers: 2, inactivityTimeout: 300,
      redeploy: async (version) => void (await machine.ok(`pulumi config set model_version ${version} && pulumi up --yes`, folder)),
    });
    expect(await machine.ok("pulumi destroy --yes", folder)).toMatch(/- 4 deleted/);
  } finally {
    await settings(lifecycle);
  }
  const client = new GpuRentalClient({ apiUrl: url, apiKey: owner });
  expect([await client.endpoints.list(), await client.workerGroups.list(), await client.instances.list()]).toEqual([[], [], []]);
}

async function control(url: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  expect(res.status).toBe(200);
}

/** Retries an assertion for up to 60 s (the autoscaler acts on its own ticks). */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
