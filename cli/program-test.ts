import * as crypto from "node:crypto";
import * as path from "node:path";
import { heldSince, Holdings, holdingsOf, instanceLogTails, killMarked, leftRunning, MACHINE_MARK, MarkedProcess, RUN_MARK, RunningEmulator, startEmulator } from "../emulator";
import { masked } from "./backend";
import { EngineEvent, EphemeralStack, withEphemeralStack } from "./ephemeral";
import { installProgram } from "./program-install";
import { projectRuntime } from "./project-file";
import { StackOutputs } from "./stack-state";
import { Steps, StepResult, writeJunit } from "./steps";
import { freshKey, registerOnSeededAccount } from "./ssh-key";
import { GpuRentalClient, route } from "../sdk";

export interface ProgramTestOptions {
  /** The Pulumi project to test (the folder holding Pulumi.yaml). */
  programDir: string;
  /** Default: `test-<random>`. */
  stackName?: string;
  /** Plain stack config of the program. */
  config?: Record<string, string>;
  /** Stack config keys that each get the API key of a fresh emulator account, as a secret (programs with several accounts). */
  accountConfigs?: string[];
  /**
   * Stack config keys that get the private half of a fresh SSH key, as a secret, its public half registered on
   * the account (programs with post-boot steps over SSH; the emulator serves SSH in any case).
   */
  sshKeyConfigs?: string[];
  /** Environment variables that each get the API key of a fresh emulator account. */
  accountEnvs?: string[];
  /** Checks of the stack outputs after `up`: `name` (set), `name=value` (equal), `name~regex` (matches). */
  expects?: string[];
  /**
   * Requests routed after `up` to a serverless endpoint that an output names: `OUTPUT~REGEX`, each of
   * `routeRequests` requests (`{"prompt": "request <i>"}`) sent through the SDK's `route`, each answer matching.
   */
  routes?: string[];
  /** How many requests each `routes` check sends, at once (default 10). */
  routeRequests?: number;
  /** The worker's path the `routes` requests go to (default `/`; a deployment's function: `/remote/<name>`). */
  routePath?: string;
  /** Their JSON payload, `<i>` standing for the request's number (default `{"prompt": "request <i>"}`). */
  routePayload?: string;
  /** Where to write a JUnit XML report. */
  junitFile?: string;
  /** Probability that an accepted offer was taken by another tenant first (0..1). */
  contention?: number;
  /** Where progress and Pulumi's own output go; default stdout. */
  out?: NodeJS.WritableStream;
  /** Resource operations at once (`pulumi up --parallel`); default one per resource of the program (cli/parallelism.ts). */
  parallel?: number;
  /** Keep the throwaway stack in this state backend (the team's own), removed from it afterwards. */
  backend?: string;
}

/**
 * `gpu-rental test`: tests a Pulumi program against a throwaway emulator in one step, as a CI pipeline runs it.
 * Starts the emulator (its instances run onstart and serve SSH, as the service's do), creates an ephemeral stack on
 * a local backend, runs `up`, a second `up` that must show no changes, the output checks, `destroy`, and checks that
 * nothing the run created is left in the emulator, nor any process it started running.
 */
export async function testProgram(options: ProgramTestOptions): Promise<StepResult[]> {
  const out = options.out ?? process.stdout;
  const log = (line: string) => out.write(`${line}\n`);
  // A failed step's report carries the logs of the instances it concerns (set once the accounts are known).
  let explain = (_message: string) => "";
  const steps = new Steps(log, (message) => explain(message));
  // Quick boots: a CI run tests the program's wiring, not the market's patience. The service's rate limits, though:
  // a program the service would refuse or hold back (many rentals at once) meets that here first.
  const emulator = await startEmulator({ contention: options.contention ?? 0, lifecycle: { provisioningMs: 200, loadingMs: 800 }, ssh: true, rateLimits: "service" });
  // Every process the run starts carries the mark (the engine, its plugins, the program, the instances' processes).
  // A run started under a mark (a job that checks its own processes so) extends it: the outer mark still finds them.
  const run = [process.env[RUN_MARK], crypto.randomBytes(6).toString("hex")].filter(Boolean).join("/");
  const machines = emulator.ssh?.machines.markPrefix;
  try {
    const accounts = newAccounts(emulator, [...(options.accountConfigs ?? []), ...(options.accountEnvs ?? [])]);
    explain = (message) => instanceLogTails(emulator.marketplace, accounts.users, message);
    const secrets = Object.fromEntries((options.accountConfigs ?? []).map((key) => [key, accounts.keys[key]]));
    for (const name of options.sshKeyConfigs ?? []) {
      const key = freshKey();
      registerOnSeededAccount(emulator, key);
      secrets[name] = key.privateKey;
    }
    // What the run found (the keys registered above included): only what the program made must be gone after it.
    const before = accounts.users.map((id) => holdingsOf(emulator.marketplace, id));
    const env = {
      [RUN_MARK]: run,
      GPU_RENTAL_API_URL: emulator.url,
      GPU_RENTAL_API_KEY: emulator.apiKey,
      ...Object.fromEntries((options.accountEnvs ?? []).map((name) => [name, accounts.keys[name]])),
    };
    // Unique on a backend that other runs share, as well as in a private one.
    const stackName = options.stackName ?? `test-${crypto.randomBytes(6).toString("hex")}`;
    const backend = options.backend ? `, backend ${masked(options.backend)}` : "";
    log(`gpu-rental test: ${options.programDir}, stack ${stackName}, emulator ${emulator.url} (the service's rate limits per key)${backend}`);
    const stackOptions = {
      programDir: options.programDir, stackName, config: options.config, secrets, env, onOutput: (text: string) => out.write(text), backend: options.backend,
    };
    await withEphemeralStack(stackOptions, async (stack) => {
      const parallel = options.parallel;
      // Python and YAML programs: the plugin and (Python) the generated SDK, as their docs have a user install them.
      const runtime = projectRuntime(stack.workspace.projectDir);
      const installed = runtime.name === "nodejs" || (await steps.run(`install (${runtime.name})`, () => installProgram(stack.workspace, runtime, log)));
      if (installed && (await steps.run("up", () => stack.up({ parallel })))) {
        await steps.run("second up shows no changes", () => upWithoutChanges(stack, parallel));
        const checks = [...(options.expects ?? []), ...(options.routes ?? [])];
        const outputs = await stack.outputs(checks.flatMap((expect) => parseCheck(expect)?.name ?? []));
        for (const expect of options.expects ?? []) await steps.run(`output ${expect}`, async () => checkOutput(outputs, expect));
        for (const check of options.routes ?? []) {
          const count = options.routeRequests ?? 10;
          await steps.run(`route ${count} requests ${check}`, () => routeRequests(emulator, outputs, check, { count, path: options.routePath, payload: options.routePayload }, log));
        }
      } else {
        steps.skip("second up shows no changes", installed ? "the first up failed" : "the install failed");
      }
      await steps.run("destroy", () => stack.destroy({ parallel }));
    });
    await steps.run("nothing left in the emulator", async () => {
      const left = accounts.users.map((id, i) => describeHeld(heldSince(before[i], holdingsOf(emulator.marketplace, id)))).filter(Boolean);
      if (left.length) throw new Error(`after destroy the emulator still holds ${left.join("; ")}: a resource's delete does not delete it.`);
    });
  } catch (error) {
    // A failure outside the steps (no Pulumi.yaml, no toolchain, ...) is a step of its own, so the report shows it.
    steps.results.push({ name: "set up", status: "failed", seconds: 0, message: (error as Error).message });
    log(`FAIL set up: ${(error as Error).message}`);
  } finally {
    await emulator.close();
  }
  await steps.run("nothing left running", async () => {
    // Ended on the way: nothing of the run may outlive it, whatever the report says.
    const left = (await leftRunning(RUN_MARK, run, 10_000)).length ? killMarked(RUN_MARK, run) : [];
    left.push(...(machines ? killMarked(MACHINE_MARK, machines, { prefix: true }) : []));
    if (left.length) throw new Error(`${describeProcesses(left)} still ran after the run ended (stopped now): whatever started them did not stop them.`);
  });
  if (options.junitFile) writeJunit(options.junitFile, `gpu-rental test ${path.basename(path.resolve(options.programDir))}`, steps.results);
  return steps.results;
}

/** The seeded user is the default account; each named account is a fresh user with a full-access key. */
function newAccounts(emulator: RunningEmulator, names: string[]): { users: number[]; keys: Record<string, string> } {
  const { accounts, seededUser } = emulator.marketplace;
  const keys: Record<string, string> = {};
  const users = [seededUser.id];
  for (const name of names) {
    const user = accounts.addUser({ email: `${name.replace(/[^\w.-]/g, "_").toLowerCase()}@accounts.gpu-rental.test` });
    keys[name] = accounts.issueKey(user.id, { name }).key;
    users.push(user.id);
  }
  return { users, keys };
}

/** A second `up` of an unchanged program must change nothing; when it would, the error names what and why. */
async function upWithoutChanges(stack: EphemeralStack, parallel?: number): Promise<void> {
  const changes: string[] = [];
  const onEvent = (event: EngineEvent) => {
    const step = event.resourcePreEvent?.metadata;
    if (step && step.op !== "same" && step.op !== "read") {
      const keys = step.diffs?.length ? step.diffs : changedInputs(step.old?.inputs, step.new?.inputs);
      changes.push(`${step.op} ${step.urn.split("::").pop()}${keys.length ? ` (${keys.join(", ")} changed)` : ""}`);
    }
  };
  try {
    await stack.up({ parallel, expectNoChanges: true, onEvent });
  } catch (error) {
    if (!changes.length) throw error;
    throw new Error(`the program is not stable: an up right after up wants to ${changes.join("; ")}. Usually a resource's diff reports a change that its create or update did not make.`);
  }
}

/**
 * The inputs that differ between two states (dynamic providers report no per-key diff to the engine). The inputs
 * the program does not write (`__provider`, a creation's `__generation`, which every up counts) are left out.
 */
function changedInputs(olds: Record<string, unknown> = {}, news: Record<string, unknown> = {}): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)].filter((key) => !key.startsWith("__")));
  return [...keys].filter((key) => JSON.stringify(olds[key]) !== JSON.stringify(news[key])).sort();
}

/** A check as written: `name` (not empty), `name=value` or `name~regex`; undefined when it is none of them. */
function parseCheck(expect: string): { name: string; op: string; wanted: string } | undefined {
  const match = /^([^=~]+)(?:([=~])(.*))?$/s.exec(expect);
  return match ? { name: match[1], op: match[2] ?? "", wanted: match[3] ?? "" } : undefined;
}

function checkOutput(outputs: StackOutputs, expect: string): void {
  const check = parseCheck(expect);
  if (!check) throw new Error(`cannot read the check ${JSON.stringify(expect)}: write name, name=value or name~regex`);
  const { name, op, wanted } = check;
  if (!(name in outputs)) throw new Error(`the stack has no output ${name} (outputs: ${Object.keys(outputs).join(", ") || "none"})`);
  const value = outputs[name].value;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const shown = outputs[name].secret ? "[secret]" : text;
  if (!op && (value === null || value === undefined || value === "")) throw new Error(`output ${name} is empty`);
  if (op === "=" && text !== wanted) throw new Error(`output ${name} is ${shown}, expected ${wanted}`);
  if (op === "~" && !new RegExp(wanted).test(text)) throw new Error(`output ${name} is ${shown}, which does not match /${wanted}/`);
}

/**
 * Sends `count` requests at once to the endpoint an output names, through the SDK's `route` (the endpoint's own
 * key, as a client of the endpoint holds it), and checks that every answer matches the check's pattern.
 */
async function routeRequests(emulator: RunningEmulator, outputs: StackOutputs, check: string, sent: { count: number; path?: string; payload?: string }, log: (line: string) => void): Promise<void> {
  const { count } = sent;
  const payloadOf = (i: number): unknown => (sent.payload === undefined ? { prompt: `request ${i}` } : JSON.parse(sent.payload.replaceAll("<i>", String(i))));
  if (sent.payload !== undefined) payloadOf(0); // a payload that is not JSON fails the step before any request
  const parsed = parseCheck(check);
  if (!parsed || parsed.op !== "~") throw new Error(`cannot read the route check ${JSON.stringify(check)}: write OUTPUT~REGEX (the output names the endpoint)`);
  const name = outputs[parsed.name]?.value;
  if (typeof name !== "string") throw new Error(`the stack has no output ${parsed.name} naming an endpoint (outputs: ${Object.keys(outputs).join(", ") || "none"})`);
  const endpoint = emulator.marketplace.serverless.endpointsNamed(name)[0];
  if (!endpoint) throw new Error(`output ${parsed.name} names ${name}, which is no endpoint of the emulator`);
  const client = new GpuRentalClient({ apiUrl: emulator.url, apiKey: emulator.apiKey });
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) => route(client, name, payloadOf(i), { endpointKey: endpoint.apiKey, timeoutMs: 120_000, maxBackoffMs: 500, path: sent.path ?? "/" })),
  );
  const workers = new Set(answers.map((a) => a.url));
  log(`  ${count} requests answered by ${workers.size} worker(s); the first: ${JSON.stringify(answers[0].body)}`);
  const wrong = answers.map((a) => JSON.stringify(a.body)).filter((text) => !new RegExp(parsed.wanted).test(text));
  if (wrong.length) throw new Error(`${wrong.length} of ${count} answers do not match /${parsed.wanted}/, e.g. ${wrong[0].slice(0, 300)}`);
}

function describeProcesses(processes: MarkedProcess[]): string {
  return processes.map((p) => `process ${p.pid} (${p.command.slice(0, 200)})`).join(", ");
}

function describeHeld(held: Holdings): string {
  const parts = (Object.keys(held) as (keyof Holdings)[]).filter((kind) => held[kind].length).map((kind) => `${kind} ${held[kind].join(", ")}`);
  return parts.join(", ");
}
