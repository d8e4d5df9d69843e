import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { totp } from "../../sdk/tfa";
import { emulatorProcess, EmulatorProcess } from "../helpers/emulator-process";
import { http } from "../helpers/emulator";
import { findPython, venv } from "../helpers/python";
import { scratchFolders } from "../helpers/paths";

/**
 * The OpenAPI document as an exact contract, judged by schemathesis (PyPI, pinned): every check, against the
 * emulator that serves the document, with a fixed seed and a bounded number of examples (not of seconds: the same
 * cases on every machine, however loaded, so a run that passed once passes again). A failure
 * is a place where the emulator and its own document disagree: an undocumented status, a body that is not
 * the documented shape, a request the schema allows but the emulator refuses (or the reverse), a method a
 * path does not take answered otherwise than 405 with Allow, a 5xx. The emulator runs in a process of its
 * own, so its memory after the run is its own.
 */
const SCHEMATHESIS = ["schemathesis==4.32.5"];
const SEED = 1;
const EXAMPLES = 40;
/**
 * Not a bound of the run (examples are): a guard against a hung run, well above the longest runs seen on slow
 * machines sharing two cores with the suite's other workers (docs/testing.md).
 */
const TIMEOUT_SECONDS = 1200;
/**
 * What the emulator's process (the built command, as users run it) may hold after the run (it reports what it
 * does; docs/testing.md has what it held in runs).
 */
const MAX_RSS_MIB = 400;
const MAX_HEAP_MIB = 200;
/** What schemathesis runs with: the emulator is local, so no proxy settings; no jest or npm variables. */
const RUN_ENV = { PATH: process.env.PATH ?? "", HOME: os.homedir(), LANG: "C.UTF-8" };
/** Operations that end the run's own session (deleting the key it came from, turning its 2FA off). */
const CREDENTIAL_ENDING = ["DELETE /api/v0/auth/apikeys/{id}/", "DELETE /api/v0/tfa/"];
/**
 * The team operations, in a phase of their own with a user of its own: a team account's own SSH-key calls are
 * refused (as the live service's), so a team made early in the main phase would leave them answering 400 to the end.
 */
const TEAM_PATHS = "^/api/v0/team/";

const python = findPython();
const skipped = "missing" in python ? ` (skipped: ${python.missing})` : "";
if (skipped) console.warn(`test/compat/schemathesis.test.ts${skipped}`);

(skipped ? describe.skip : describe)(`schemathesis (${SCHEMATHESIS.join(", ")}, all checks) against the emulator's /openapi.json${skipped}`, () => {
  let emu: EmulatorProcess;
  let st: string;
  const runDir = scratchFolders("schemathesis");

  beforeAll(async () => {
    st = (await venv("schemathesis", python as Exclude<typeof python, { missing: string }>, SCHEMATHESIS)).bin("st");
    // No emulated machines: the onstart scripts schemathesis makes up must not run on this computer; and no webhook
    // delivery to the http:// and loopback URLs it makes up, as the live service.
    emu = await emulatorProcess(["--api-key", "schemathesis-seeded-key", "--no-ssh", "--no-local-webhooks"]);
  }, 15 * 60_000);
  afterAll(() => emu?.stop());

  it("finds no failure and no server error, and the emulator's memory stays bounded", async () => {
    const memory = async () => (await http(emu.url, "GET", "/_emulator/state")).body.memory as { rss: number; heapUsed: number };
    const before = await memory();
    const dir = runDir();
    const document = (await http(emu.url, "GET", "/openapi.json")).body;
    fs.writeFileSync(path.join(dir, "schemathesis.toml"), configFor(document));
    const ownKeyed = ownKeyedOperations(document);
    const run = async (phase: string, session: string, selection: string[]) => {
      const args = [
        "--config-file", path.join(dir, "schemathesis.toml"), "run", `${emu.url}/openapi.json`, "--url", emu.url,
        "-H", `Authorization: Bearer ${session}`, "--seed", String(SEED), "--max-examples", String(EXAMPLES),
        "--no-color", ...selection,
      ];
      return new Promise<{ phase: string; code: number; output: string }>((resolve) =>
        // In the run's own folder: schemathesis keeps a cache of failures in `.schemathesis/` where it runs. With a
        // small environment: requests reads every variable for proxy settings on every call (some 10% of its time).
        execFile(st, args, { cwd: dir, env: RUN_ENV, maxBuffer: 64 << 20, timeout: TIMEOUT_SECONDS * 1000 }, (error, stdout, stderr) =>
          resolve({ phase, code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
        ),
      );
    };
    // The run's own credentials die with the key it logged in with, or with its 2FA (as they should): the
    // operations that end them are fuzzed last, each phase with a session of its own, so no other operation
    // is left answering 401 to a dead session.
    const apart = [...CREDENTIAL_ENDING.flatMap((name) => ["--exclude-name", name]), "--exclude-path-regex", TEAM_PATHS];
    const runs = [await run("all operations but those ending credentials and the team's", await fuzzingSession(emu), apart)];
    const phases: [string, string[]][] = [...CREDENTIAL_ENDING.map((name): [string, string[]] => [name, ["--include-name", name]]), ["the team's operations", ["--include-path-regex", TEAM_PATHS]]];
    for (const [phase, selection] of phases) {
      // A user of its own: the phase before may have turned 2FA off or deleted keys of the seeded user.
      const user = await http(emu.url, "POST", "/_emulator/users", { body: { email: `fuzz-${runs.length}@gpu-rental.test` } });
      runs.push(await run(phase, await fuzzingSession(emu, user.body.api_key), selection));
    }
    const after = await memory();
    let cases = 0;
    let serverErrors = 0;
    for (const { phase, code, output } of runs) {
      const summary = output.slice(output.lastIndexOf("SUMMARY"));
      cases += Number(/(\d+) generated/.exec(summary)?.[1] ?? 0);
      serverErrors += (output.match(/\[5\d\d\]/g) ?? []).length;
      // On failure, what schemathesis said is the message.
      expect([phase, code, output.includes("FAILURES") ? output.slice(output.indexOf("FAILURES")) : "no failures"]).toEqual([phase, 0, "no failures"]);
      expect([phase, unauthenticated(output).filter((name) => !ownKeyed.has(name))]).toEqual([phase, []]);
    }
    console.log(
      `schemathesis, all checks, seed ${SEED}, ${runs.length} phases: ${cases} test cases, ${serverErrors} server errors; emulator memory ` +
        `before: RSS ${before.rss} MiB, heap ${before.heapUsed} MiB; after: RSS ${after.rss} MiB, heap ${after.heapUsed} MiB ` +
        `(bounds ${MAX_RSS_MIB} and ${MAX_HEAP_MIB} MiB)`,
    );
    expect(cases).toBeGreaterThan(25_000); // some 29,000: the coverage phase alone draws most
    expect(serverErrors).toBe(0);
    expect(after.rss).toBeLessThan(MAX_RSS_MIB);
    expect(after.heapUsed).toBeLessThan(MAX_HEAP_MIB);
  }, (TIMEOUT_SECONDS + 120) * 1000);
});

/**
 * A bearer the run cannot take away from itself. The API lets a key revoke any of its user's keys, itself
 * included (`DELETE /api/v0/auth/apikeys/{id}/`), and the fuzzer tries every id; a 2FA login session is not one
 * of the user's keys, so no call of the API ends it. The seeded user enables TOTP and logs in with a backup code.
 */
async function fuzzingSession(emu: EmulatorProcess, key = emu.apiKey): Promise<string> {
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await http(emu.url, method, url, { key, body });
    if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const pending = await call("POST", "/api/v0/tfa/authorize-new-method/", { tfa_method: "email" });
  const code = (await call("GET", "/_emulator/outbox?channel=email")).messages.at(-1).code;
  await call("PUT", "/api/v0/tfa/authorize-new-method/", { code, secret: pending.secret });
  const { secret } = await call("POST", "/api/v0/tfa/totp-setup/", {});
  const { now } = await call("GET", "/_emulator/state");
  const { backup_codes: backupCodes } = await call("POST", "/api/v0/tfa/confirm-new/", { tfa_method: "totp", code: totp(secret, now), secret });
  return (await call("POST", "/api/v0/tfa/", { backup_code: backupCodes[0] })).session_key;
}

/**
 * The operations that schemathesis says "returned only 401/403": a run whose session died, unless each is one of
 * `ownKeyed` below.
 */
function unauthenticated(output: string): string[] {
  const at = output.indexOf("Authentication failed");
  if (at < 0) return [];
  const end = output.indexOf("💡", at);
  return [...output.slice(at, end < 0 ? undefined : end).matchAll(/^\s+- (\w+ \S+)$/gm)].map((match) => match[1]);
}

/**
 * The operations that take no account key but one of their own (the autoscaler host's: an endpoint's key, a worker's
 * instance key as `mtoken`), marked `x-own-key` in the document: the run holds no such key for the ids it makes up,
 * so 401 may be all they answer it, whatever its session.
 */
function ownKeyedOperations(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): Set<string> {
  const names = new Set<string>();
  for (const [url, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (operation["x-own-key"] === true) names.add(`${method.toUpperCase()} ${url}`);
    }
  }
  return names;
}

/**
 * No example database: each run starts in a fresh folder, so the examples it would keep for the next are never
 * replayed, and keeping them (Hypothesis's Pareto front of every case) costs some 10 % of the run's CPU.
 */
const GENERATION = `[generation]\ndatabase = "none"\n`;

/**
 * schemathesis.toml from the document itself: every check on, relaxed only where the service's contract says so.
 * (Every check is turned on here, not with `--checks all`: on the command line it overrides the operations' own
 * settings below, so a stateful run that reads an instance after deleting it would fail on a documented answer.)
 * - an operation whose rules refuse some requests the schema allows (`x-rules`: a bid below the minimum, a
 *   wrong 2FA code; rules of the service's state, which no schema can state) may answer such a request 400,
 *   and one that documents 410 (an offer that cannot start at once, with cancel_unavail) may answer it 410;
 * - one whose missing key is 403 by its contract (`x-missing-key-status`, the 2FA endpoints) may answer a
 *   call without `Authorization` so;
 * - one that takes a query may refuse a URL over 8 KB with 414 (too long): valid data (the listing's
 *   `select_filters` is any JSON object) as well as invalid data, which it refuses so rather than with 400;
 * - one that answers an unknown id with `null` in a 200 (`x-missing-is-null`, the instance read, as the live
 *   service does) is not expected to 404 after a delete.
 */
function configFor(document: { paths: Record<string, Record<string, Record<string, unknown>>> }): string {
  // The operations of each set of settings, in one section: schemathesis matches every case's operation against
  // every section (some 1.3 million matches a run with one section an operation).
  const sections = new Map<string, string[]>();
  for (const [url, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const name = `${method.toUpperCase()} ${url}`;
      const lines: string[] = [];
      const positive = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"];
      if (operation["x-rules"]) positive.push("400");
      if ((operation.responses as Record<string, unknown>)["410"]) positive.push("410");
      // A URL over 8 KB is refused for its length (414), whether or not its parameters are valid.
      if ((operation.responses as Record<string, unknown>)["414"]) positive.push("414");
      if (positive.length > 8) lines.push(`checks.positive_data_acceptance.expected-statuses = ${JSON.stringify(positive)}`);
      // A URL over 8 KB is refused for its length (414) before its content is read: refused all the same.
      if ((operation.responses as Record<string, unknown>)["414"]) {
        lines.push(`checks.negative_data_rejection.expected-statuses = ${JSON.stringify(["400", "401", "403", "404", "405", "406", "409", "414", "415", "422", "428", "429", "5xx"])}`);
      }
      if (operation["x-missing-is-null"]) lines.push("checks.use_after_free.enabled = false", "checks.ensure_resource_availability.enabled = false");
      const missingKey = operation["x-missing-key-status"];
      if (missingKey) lines.push(`checks.missing_required_header.expected-statuses = ${JSON.stringify(["401", String(missingKey)])}`);
      if (lines.length) sections.set(lines.join("\n"), [...(sections.get(lines.join("\n")) ?? []), name]);
    }
  }
  const operations = [...sections].map(([lines, names]) => `[[operations]]\ninclude-name = ${JSON.stringify(names)}\n${lines}\n`);
  return ["[checks]\nenabled = true\n", GENERATION, ...operations].join("\n");
}
