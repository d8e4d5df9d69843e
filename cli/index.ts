import * as path from "node:path";
import { parseArgs } from "node:util";
import { runDeploy } from "./deploy";
import { runEmulatorCommand } from "./emulator";
import { runSweep } from "./sweep";
import { runSpend } from "./spend";
import { testProgram } from "./program-test";
import { ensureToolchain, LANGUAGES } from "./toolchain";
import { installPlugin } from "./plugin-install";

const USAGE = `Usage: gpu-rental <command> [options]

Commands:
  emulator   Run the marketplace emulator in the foreground; prints its URL and the seeded user's API key.
             --port N            listen on 127.0.0.1:N (default: a free port)
             --api-key KEY       use KEY as the seeded user's key (default: derived from the seed)
             --seed N            seed of the market and of contention (default 1)
             --offers N          offers in the seeded market (default 300)
             --contention P      probability that an accepted offer was taken by another tenant first (0..1)
             --provisioning-ms N, --loading-ms N   instance boot phase durations
             --no-control        do not serve the /_emulator/ control API
             --control-token T   every control call must send T in X-Emulator-Token (shared CI runners); also
                                 read from GPU_RENTAL_CONTROL_TOKEN, which keeps it out of the process list
             --data-dir DIR      keep state in DIR across restarts (crash-safe); memory only without it
             --ssh               serve SSH: each instance of an SSH or Jupyter runtype gets a sandbox folder
                                 and an SSH endpoint on 127.0.0.1 (its ssh_host/ssh_port) that takes the keys
                                 registered on the account (POST /api/v0/ssh/); onstart runs there at boot
             --legacy-instance-listing   serve the retired GET /api/v0/instances/ as it answered before the live
                                 service retired it (old scripts); also GPU_RENTAL_LEGACY_INSTANCE_LISTING=1.
                                 Without it, it answers the live service's deprecation (emulator/INSTANCES.md)
  test [DIR] Test the Pulumi program in DIR (default .) against a throwaway emulator, as a CI job does: up, a
             second up that must change nothing, output checks, destroy, nothing left behind. Exits 1 on any
             failure, with a report of each step. TypeScript, Python and YAML programs alike (for Python and
             YAML the plugin is installed first, and a Python program's venv and SDK made by pulumi install).
             --stack NAME            stack name (default test-<random>); the stack is removed afterwards
             --config KEY=VALUE      plain stack config (repeatable)
             --account-config KEY    a fresh emulator account whose API key goes into secret stack config KEY
                                     (repeatable: programs that use several accounts)
             --account-env NAME      the same, into the environment variable NAME
             --ssh-key-config KEY    serve SSH, and put the private half of a fresh key, registered on the
                                     account, into secret stack config KEY (programs with post-boot steps)
             --expect CHECK          check an output after up: NAME (set), NAME=VALUE, NAME~REGEX (repeatable)
             --junit FILE            also write the report as JUnit XML
             --contention P          as for emulator
             --parallel N            resource operations at once (pulumi up --parallel); default one per
                                     resource of the program, at least 64, not 4 x the machine's cores
  deploy [DIR]  Deploy the Pulumi program in DIR (default .) against the embedded emulator on a throwaway stack,
             show its outputs, destroy it: the main job (npm start) on the root stack. --keep keeps the stack
             and the emulator up until Ctrl-C; --contention P as above; --stack NAME; --parallel N as for test.
  sweep      Find and destroy what crashed runs left behind (instances, network volumes, API keys), by the
             creation tokens the workflow library gives them; account from GPU_RENTAL_API_URL/GPU_RENTAL_API_KEY.
             --token-prefix P    everything whose token starts with P- (the tokenPrefix the run used)
             --token T           everything carrying token T (repeatable; an OutcomeUnknownError names it)
             --label L           instances labelled L
             --stack S           the orphans of Pulumi stack S (run in its project's folder): what carries the
                                 stack's creation tokens and its state does not hold (a deploy cut off before
                                 the state learnt of it); the stack's own objects are never touched
             --older-than D      only instances older than D (90s, 15m, 6h, 2d); volumes and keys are left alone
             --idle D            only instances stopped for at least D (read from the billing)
             --dry-run           only list what would be destroyed
  spend      What the account is paying for: every instance with label, token, owner, state, age, $/hour now and
             accrued cost (the billing's figures), ended ones with their end, and the totals. Needs a key that may
             read billing. --json; filters --older-than D, --label L, --token-prefix P. --stack S (repeatable, run
             in the project's folder): the owner says whether stack S's state holds the instance, it is an orphan
             of S, made by gpu-rental otherwise, or not made by gpu-rental.
  plugin install
             Install the gpu-rental provider plugin of this package into your Pulumi plugins ($PULUMI_HOME,
             default ~/.pulumi): programs in every Pulumi language (Python, YAML, ...) can then use the
             gpu-rental:index:* resources, and \`pulumi package add gpu-rental\` generates their SDK. It keeps
             working when this folder is removed. Uses the pulumi on PATH (or the toolchain's).
  toolchain  Find or build pulumi v3.248.0 with language hosts for Node.js, Python, Go (gpu-rental's own) and
             YAML (Pulumi's), from the Go module proxy; prints the folder holding them and how long it took.
`;

function number(value: string | undefined, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** A whole number of resource operations at once, for `--parallel`. */
function parallel(value: string | undefined): number | undefined {
  const n = number(value, "parallel", 1, 100_000);
  if (n !== undefined && !Number.isInteger(n)) throw new UsageError(`--parallel must be a whole number, got ${JSON.stringify(value)}`);
  return n;
}

function programDir(positionals: string[]): string {
  if (positionals.length > 1) throw new UsageError(`one program folder at most, got ${positionals.join(" ")}`);
  return path.resolve(positionals[0] ?? ".");
}

function keyValues(pairs: string[], flag: string): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      if (at < 1) throw new UsageError(`${flag} takes KEY=VALUE, got ${JSON.stringify(pair)}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

export class UsageError extends Error {
  override name = "UsageError";
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return;
  }
  if (command === "emulator") {
    const { values } = parseArgs({
      args: rest,
      options: {
        port: { type: "string" }, "api-key": { type: "string" }, seed: { type: "string" }, offers: { type: "string" },
        contention: { type: "string" }, "provisioning-ms": { type: "string" }, "loading-ms": { type: "string" },
        "no-control": { type: "boolean" }, "data-dir": { type: "string" }, ssh: { type: "boolean" }, "control-token": { type: "string" },
        "legacy-instance-listing": { type: "boolean" },
      },
    });
    if (values["api-key"] !== undefined && !/^[\w.-]{8,}$/.test(values["api-key"])) {
      throw new UsageError("--api-key must be at least 8 characters of letters, digits, '.', '_' or '-'");
    }
    // An empty variable (a CI template's default) is no token.
    const controlToken = values["control-token"] ?? (process.env.GPU_RENTAL_CONTROL_TOKEN || undefined);
    if (controlToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(controlToken)) {
      throw new UsageError("--control-token must be at least 16 printable characters without spaces");
    }
    const provisioningMs = number(values["provisioning-ms"], "provisioning-ms");
    const loadingMs = number(values["loading-ms"], "loading-ms");
    await runEmulatorCommand({
      port: number(values.port, "port", 0, 65535),
      apiKey: values["api-key"],
      seed: number(values.seed, "seed"),
      offers: number(values.offers, "offers", 1, 1_000_000),
      contention: number(values.contention, "contention", 0, 1),
      lifecycle: { ...(provisioningMs !== undefined && { provisioningMs }), ...(loadingMs !== undefined && { loadingMs }) },
      controlApi: !values["no-control"],
      controlToken,
      dataDir: values["data-dir"],
      ssh: !!values.ssh,
      legacyInstanceListing: !!values["legacy-instance-listing"] || process.env.GPU_RENTAL_LEGACY_INSTANCE_LISTING === "1",
    });
    return;
  }
  if (command === "deploy") {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { keep: { type: "boolean" }, contention: { type: "string" }, stack: { type: "string" }, parallel: { type: "string" } },
    });
    await runDeploy({
      programDir: programDir(positionals),
      keep: !!values.keep,
      contention: number(values.contention, "contention", 0, 1) ?? 0,
      stack: values.stack,
      parallel: parallel(values.parallel),
    });
    return;
  }
  if (command === "test") {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        stack: { type: "string" }, config: { type: "string", multiple: true }, "account-config": { type: "string", multiple: true },
        "account-env": { type: "string", multiple: true }, "ssh-key-config": { type: "string", multiple: true }, expect: { type: "string", multiple: true }, junit: { type: "string" },
        contention: { type: "string" }, parallel: { type: "string" },
      },
    });
    const results = await testProgram({
      programDir: programDir(positionals),
      stackName: values.stack,
      config: keyValues(values.config ?? [], "--config"),
      accountConfigs: values["account-config"],
      accountEnvs: values["account-env"],
      sshKeyConfigs: values["ssh-key-config"],
      expects: values.expect,
      junitFile: values.junit,
      contention: number(values.contention, "contention", 0, 1),
      parallel: parallel(values.parallel),
    });
    const failed = results.filter((r) => r.status === "failed");
    console.log(`\ngpu-rental test: ${results.length - failed.length} of ${results.length} steps passed${failed.length ? `; failed: ${failed.map((r) => r.name).join(", ")}` : ""}`);
    if (failed.length) process.exitCode = 1;
    return;
  }
  if (command === "sweep") {
    const { values } = parseArgs({
      args: rest,
      options: {
        "token-prefix": { type: "string" }, token: { type: "string", multiple: true }, label: { type: "string" }, "dry-run": { type: "boolean" },
        "older-than": { type: "string" }, idle: { type: "string" }, stack: { type: "string" },
      },
    });
    if (!values["token-prefix"] && !values.token?.length && !values.label && !values.stack) {
      throw new UsageError("sweep needs --token-prefix, --token, --label or --stack: it never sweeps a whole account");
    }
    await runSweep({
      tokenPrefix: values["token-prefix"], tokens: values.token, label: values.label, dryRun: !!values["dry-run"],
      olderThan: values["older-than"], idle: values.idle, stack: values.stack,
    });
    return;
  }
  if (command === "spend") {
    const { values } = parseArgs({
      args: rest,
      options: {
        json: { type: "boolean" }, "older-than": { type: "string" }, label: { type: "string" }, "token-prefix": { type: "string" },
        stack: { type: "string", multiple: true },
      },
    });
    await runSpend({ olderThan: values["older-than"], label: values.label, tokenPrefix: values["token-prefix"] }, !!values.json, values.stack);
    return;
  }
  if (command === "plugin") {
    const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
    if (positionals.length !== 1 || positionals[0] !== "install") throw new UsageError(`plugin takes one subcommand: install.\n\n${USAGE}`);
    const pulumi = path.join(ensureToolchain().bin, "pulumi");
    const { name, version, dir } = installPlugin({ pulumi, env: process.env });
    console.log(`${name} ${version} ${dir}`);
    return;
  }
  if (command === "toolchain") {
    console.log(ensureToolchain({ inherit: false, languages: LANGUAGES }).bin);
    return;
  }
  throw new UsageError(`Unknown command ${JSON.stringify(command)}.\n\n${USAGE}`);
}
