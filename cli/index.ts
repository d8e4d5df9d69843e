import * as fs from "node:fs";
import * as path from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { ensureToolchain, LANGUAGES } from "./toolchain";
import { PACKAGE_ROOT } from "../sdk/package-root";

/**
 * The commands' modules, each loaded when its command runs: most load the SDK, some the emulator too (a third of
 * a second of CPU in all), which `gpu-rental toolchain --env` or `--help` has no use for.
 */
const load = {
  deploy: (): typeof import("./deploy") => require("./deploy"),
  up: (): typeof import("./up") => require("./up"),
  emulator: (): typeof import("./emulator") => require("./emulator"),
  sweep: (): typeof import("./sweep") => require("./sweep"),
  spend: (): typeof import("./spend") => require("./spend"),
  logs: (): typeof import("./logs") => require("./logs"),
  programTest: (): typeof import("./program-test") => require("./program-test"),
  pluginInstall: (): typeof import("./plugin-install") => require("./plugin-install"),
  account: (): typeof import("./account") => require("./account"),
  job: (): typeof import("./job") => require("./job"),
};

/** The package's version, as `gpu-rental --version` prints it. */
const VERSION: string = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")).version;

/** A number within bounds, for an option's value; commander names the option and the value when it is not. */
function number(min = 0, max = Number.MAX_SAFE_INTEGER, whole = false): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`It must be a number from ${min} to ${max}.`);
    if (whole && !Number.isInteger(n)) throw new InvalidArgumentError("It must be a whole number.");
    return n;
  };
}

/** Every value of a repeatable option, in order. */
const repeatable = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** `KEY=VALUE` pairs of a repeatable option. */
function keyValues(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf("=");
  if (at < 1) throw new InvalidArgumentError("Write KEY=VALUE.");
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

const parallelOption = () =>
  new Option("--parallel <n>", "resource operations at once, as pulumi up --parallel (default: one per resource of the program, at least 64)")
    .argParser(number(1, 100_000, true));

/** The commands of `gpu-rental`, each with its own usage, options (with their defaults) and an example. */
export function program(): Command {
  const cli = new Command("gpu-rental")
    .description("Rent GPU machines as code, and test it all against a local emulator of the marketplace before money is spent.")
    .version(VERSION, "-v, --version", "print the version")
    .helpCommand("help [command]", "the usage of a command")
    .addHelpText("after", example("npx gpu-rental test --expect ssh", "npx gpu-rental emulator --port 8765 --api-key local-dev-key-1 &"));
  // Every command: a misspelt option or command gets a suggestion and the command's usage, exit code 2.
  const configure = (command: Command) => command.showSuggestionAfterError().showHelpAfterError().exitOverride();
  configure(cli);
  for (const command of [emulatorCommand(), testCommand(), deployCommand(), upCommand(), sweepCommand(), spendCommand(), jobCommand(), logsCommand(), pluginCommand(), toolchainCommand()]) {
    cli.addCommand(command);
    configure(command).commands.forEach(configure);
  }
  return cli;
}

function emulatorCommand(): Command {
  return new Command("emulator")
    .summary("run the marketplace emulator in the foreground")
    .description(
      "Run the marketplace emulator in the foreground until Ctrl-C (or until the process that started it is gone). It prints its URL " +
        "and the seeded user's API key. Instances of an SSH or Jupyter runtype get an emulated machine on this computer: onstart runs " +
        "there at boot (so maxLifetime and idleTimeout end them) and their ssh_host/ssh_port serve SSH on 127.0.0.1.",
    )
    .addOption(new Option("--port <n>", "listen on 127.0.0.1:N (default: a free port)").argParser(number(0, 65535, true)))
    .addOption(new Option("--api-key <key>", "the seeded user's API key (at least 8 of letters, digits, '.', '_', '-') (default: a random key)").argParser(apiKey))
    .addOption(new Option("--account-key <key>", "another account, whose API key is KEY (programs that use several accounts; repeatable)").argParser(accountKeys))
    .addOption(new Option("--ssh-key <file>", "register the public half of this private key (FILE.pub) on the seeded account, and print each instance's ssh command as it comes up"))
    .addOption(new Option("--no-ssh", "no emulated machines: onstart does not run, so maxLifetime and idleTimeout cannot end instances, and no SSH is served"))
    .addOption(new Option("--ssh").hideHelp()) // the default now; kept for the scripts that ask for it
    .addOption(new Option("--seed <n>", "seed of the market and of contention").argParser(number(0, Number.MAX_SAFE_INTEGER, true)).default(1))
    .addOption(new Option("--offers <n>", "offers in the seeded market").argParser(number(1, 1_000_000, true)).default(300))
    .addOption(new Option("--contention <p>", "probability that an accepted offer was taken by another tenant first").argParser(number(0, 1)).default(0))
    .addOption(new Option("--provisioning-ms <n>", "how long an instance is provisioning").argParser(number()).default(2000))
    .addOption(new Option("--loading-ms <n>", "how long an instance is loading before it runs").argParser(number()).default(5000))
    .addOption(new Option("--data-dir <dir>", "keep state in DIR across restarts (crash-safe) (default: memory only)"))
    .option("--no-control", "do not serve the /_emulator/ control API")
    .addOption(
      new Option("--control-token <token>", "every control call must send TOKEN in X-Emulator-Token (shared CI runners); GPU_RENTAL_CONTROL_TOKEN keeps it out of the process list")
        .argParser(controlToken),
    )
    .option("--legacy-instance-listing", "serve the retired GET /api/v0/instances/ as it answered before (old scripts; also GPU_RENTAL_LEGACY_INSTANCE_LISTING=1)")
    .option("--no-local-webhooks", "take webhooks as the live service does: https:// URLs only, and no delivery to private or loopback targets (default: http:// and this computer's receivers too)")
    .option("--no-rate-limits", "no rate limits (a fast test that is not about them; default: the live service's per key, offer search 10 a minute, instance creation 1 per 3 s; also GPU_RENTAL_EMULATOR_RATE_LIMITS=off)")
    .addHelpText("after", example("npx gpu-rental emulator --port 8765 --api-key local-dev-key-1 --ssh-key ~/.ssh/id_ed25519 &"))
    .action(async (options) => {
      // An empty variable (a CI template's default) is no token.
      const fromEnv = process.env.GPU_RENTAL_CONTROL_TOKEN || undefined;
      await load.emulator().runEmulatorCommand({
        port: options.port,
        apiKey: options.apiKey,
        accountKeys: options.accountKey ?? [],
        seed: options.seed,
        offers: options.offers,
        contention: options.contention,
        lifecycle: { provisioningMs: options.provisioningMs, loadingMs: options.loadingMs },
        controlApi: options.control,
        controlToken: options.controlToken ?? (fromEnv === undefined ? undefined : tokenFromEnvironment(fromEnv)),
        dataDir: options.dataDir,
        ssh: options.ssh !== false,
        sshKeyFile: options.sshKey,
        legacyInstanceListing: !!options.legacyInstanceListing || process.env.GPU_RENTAL_LEGACY_INSTANCE_LISTING === "1",
        ...(options.localWebhooks === false && { localWebhooks: false }),
        ...((options.rateLimits === false || process.env.GPU_RENTAL_EMULATOR_RATE_LIMITS === "off") && { rateLimits: "off" as const }),
      });
    });
}

/** A backend URL as `pulumi login` takes one: a scheme and a place. */
function backendUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(value)) throw new InvalidArgumentError("Give the backend's URL as `pulumi login` takes it: postgres://USER@HOST:PORT/DB, s3://BUCKET, file://FOLDER or https://api.pulumi.com.");
  return value;
}

function apiKey(value: string): string {
  if (!/^[\w.-]{8,}$/.test(value)) throw new InvalidArgumentError("An API key is at least 8 characters of letters, digits, '.', '_' or '-'.");
  return value;
}

function accountKeys(value: string, previous: string[] | undefined): string[] {
  return repeatable(apiKey(value), previous);
}

function controlToken(value: string): string {
  if (!/^[\x21-\x7e]{16,}$/.test(value)) throw new InvalidArgumentError("A control token is at least 16 printable characters without spaces.");
  return value;
}

function tokenFromEnvironment(value: string): string {
  try {
    return controlToken(value);
  } catch (error) {
    throw new Error(`GPU_RENTAL_CONTROL_TOKEN: ${(error as Error).message} Set it to such a token, or unset it.`);
  }
}

function testCommand(): Command {
  return new Command("test")
    .summary("test a Pulumi program against a throwaway emulator, as a CI job does")
    .description(
      "Test the Pulumi program in DIR against a throwaway emulator: up, a second up that must change nothing, the output checks, destroy, " +
        "and checks that nothing is left in the emulator nor running on this computer. Exits 1 on any failure, with a report of each step. " +
        "TypeScript, JavaScript, Python, Go and YAML programs alike (for Python, Go and YAML the provider plugin is installed first, and the " +
        "program's SDK by `pulumi install`). Instances get emulated machines: onstart runs, SSH is served on 127.0.0.1.",
    )
    .argument("[dir]", "the folder holding Pulumi.yaml", ".")
    .option("--expect <check>", "check an output after up: NAME (set), NAME=VALUE, NAME~REGEX (repeatable)", repeatable)
    .option("--config <key=value>", "plain stack config (repeatable)", keyValues)
    .option("--account-config <key>", "a fresh emulator account whose API key goes into secret stack config KEY (repeatable)", repeatable)
    .option("--account-env <name>", "a fresh emulator account whose API key goes into the environment variable NAME (repeatable)", repeatable)
    .option("--route <check>", "after up, route requests to the serverless endpoint an output names: OUTPUT~REGEX, every answer matching (repeatable)", repeatable)
    .addOption(new Option("--route-requests <n>", "how many requests each --route sends at once").argParser(number(1, 1000, true)).default(10))
    .option("--route-path <path>", "the worker's path each --route request goes to (a deployment's function: /remote/<name>)", "/")
    .option("--route-payload <json>", 'the JSON payload of each --route request ("<i>" in it: the request\'s number; default {"prompt": "request <i>"})')
    .option("--ssh-key-config <key>", "a fresh SSH key, registered on the account, its private half in secret stack config KEY (post-boot steps; repeatable)", repeatable)
    .option("--junit <file>", "also write the report as JUnit XML")
    .addOption(new Option("--stack <name>", "the stack's name; it is removed afterwards (default: test-<random>)"))
    .addOption(new Option("--backend <url>", "keep the throwaway stack in this state backend, as `pulumi login` takes it (the team's own: postgres://, s3://, file://; default: a private one); it is removed afterwards").argParser(backendUrl))
    .addOption(new Option("--contention <p>", "probability that an accepted offer was taken by another tenant first").argParser(number(0, 1)).default(0))
    .addOption(parallelOption())
    .addHelpText(
      "after",
      example(
        "npx gpu-rental test --expect ssh --junit gpu-rental-test.xml",
        "npx gpu-rental test examples/python --account-config teamApiKey --expect 'instance_id~^\\d+$'",
        'npx gpu-rental test --backend "$PULUMI_BACKEND_URL"   # the team\'s backend (PULUMI_CONFIG_PASSPHRASE is not needed)',
      ),
    )
    .action(async (dir: string, options) => {
      const results = await load.programTest().testProgram({
        programDir: path.resolve(dir),
        stackName: options.stack,
        config: options.config ?? {},
        accountConfigs: options.accountConfig,
        accountEnvs: options.accountEnv,
        sshKeyConfigs: options.sshKeyConfig,
        expects: options.expect,
        routes: options.route,
        routeRequests: options.routeRequests,
        routePath: options.routePath,
        routePayload: options.routePayload,
        junitFile: options.junit,
        contention: options.contention,
        parallel: options.parallel,
        backend: options.backend,
      });
      const failed = results.filter((r) => r.status === "failed");
      console.log(`\ngpu-rental test: ${results.length - failed.length} of ${results.length} steps passed${failed.length ? `; failed: ${failed.map((r) => r.name).join(", ")}` : ""}`);
      if (failed.length) process.exitCode = 1;
    });
}

function deployCommand(): Command {
  return new Command("deploy")
    .summary("deploy a program against the embedded emulator, show its outputs, destroy it (the main job)")
    .description(
      "Deploy the Pulumi program in DIR against the embedded emulator on a throwaway stack, show its outputs (and the ssh command of an " +
        "instance that exports sshHost and sshPort), then destroy it: the main job (npm start) on the root stack.",
    )
    .argument("[dir]", "the folder holding Pulumi.yaml", ".")
    .option("--keep", "keep the stack and the emulator up until Ctrl-C")
    .addOption(new Option("--stack <name>", "the stack's name (default: deploy-<random>)"))
    .addOption(new Option("--contention <p>", "probability that an accepted offer was taken by another tenant first").argParser(number(0, 1)).default(0))
    .addOption(parallelOption())
    .addHelpText("after", example("npm start -- --keep", "npx gpu-rental deploy examples/instance-from-image --contention 0.5"))
    .action(async (dir: string, options) => {
      await load.deploy().runDeploy({ programDir: path.resolve(dir), keep: !!options.keep, contention: options.contention, stack: options.stack, parallel: options.parallel });
    });
}

function upCommand(): Command {
  return new Command("up")
    .summary("pulumi up of a stack, as a runner's deploy step (its backend's refusals said plainly)")
    .description(
      "Run `pulumi up --yes` on stack STACK of the program in DIR, in this runner's own Pulumi setup (PULUMI_BACKEND_URL, PULUMI_HOME, the " +
        "passphrase or access token as the workflow sets them), with the toolchain's pulumi where none is installed. When the state backend " +
        "refuses the run (another run holds the stack's lock, or the backend cannot be reached) it says so in one line, with what to do.",
    )
    .argument("[dir]", "the folder holding Pulumi.yaml", ".")
    .requiredOption("--stack <name>", "the stack to deploy")
    .addOption(parallelOption())
    .addHelpText("after", example('PULUMI_BACKEND_URL=postgres://ci@db:5432/pulumi npx gpu-rental up --stack "pr-$PR_NUMBER"'))
    .action(async (dir: string, options) => {
      process.exitCode = await load.up().runUp({ programDir: path.resolve(dir), stack: options.stack, parallel: options.parallel });
    });
}

function sweepCommand(): Command {
  return new Command("sweep")
    .summary("destroy what crashed runs left behind")
    .description(
      "Find and destroy what crashed runs left behind (instances, network volumes, API keys), by the creation tokens the workflow library " +
        "gives them, or instances by label. The account: GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY (never a key on the command line). " +
        "One of --token-prefix, --token, --label or --stack is required: a sweep never takes a whole account.",
    )
    .option("--token-prefix <p>", "everything whose creation token starts with P- (the tokenPrefix the run used)")
    .option("--token <token>", "everything carrying this creation token (an OutcomeUnknownError names it; repeatable)", repeatable)
    .option("--label <label>", "instances labelled LABEL")
    .option(
      "--stack <stack>",
      "the orphans of Pulumi stack STACK (run in its project's folder): what carries the stack's creation tokens and its state does not " +
        "hold (a deploy cut off before the state learnt of it); the stack's own objects are never touched",
    )
    .option("--older-than <d>", "only instances older than D (90s, 15m, 6h, 2d); volumes and keys are left alone")
    .option("--idle <d>", "only instances stopped for at least D (read from the billing)")
    .option("--dry-run", "only list what would be destroyed")
    .addHelpText("after", example("GPU_RENTAL_API_URL=... GPU_RENTAL_API_KEY=... npx gpu-rental sweep --token-prefix ci-1234 --dry-run"))
    .action(async function (this: Command, options) {
      if (!options.tokenPrefix && !options.token?.length && !options.label && !options.stack) {
        this.error("error: sweep needs --token-prefix, --token, --label or --stack: it never sweeps a whole account.", { exitCode: 2 });
      }
      await load.sweep().runSweep(
        { tokenPrefix: options.tokenPrefix, tokens: options.token, label: options.label, dryRun: !!options.dryRun, olderThan: options.olderThan, idle: options.idle, stack: options.stack },
        load.account().accountFromEnvironment("sweep"),
      );
    });
}

function spendCommand(): Command {
  return new Command("spend")
    .summary("what the account is paying for now, and has paid")
    .description(
      "Every instance of the account with label, creation token, owner, state, age, $/hour now and accrued cost (the billing's figures), " +
        "ended ones with their end, and the totals. The account: GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY, a key that may read billing.",
    )
    .option("--json", "print JSON, for scripts")
    .option("--older-than <d>", "only instances older than D (90s, 15m, 6h, 2d)")
    .option("--label <label>", "only instances labelled LABEL")
    .option("--token-prefix <p>", "only instances whose creation token starts with P-")
    .option(
      "--stack <stack>",
      "run in the stack's project folder (repeatable): the owner column says whether stack STACK's state holds the instance, it is an " +
        "orphan of STACK, made by gpu-rental otherwise, or not made by gpu-rental",
      repeatable,
    )
    .addHelpText("after", example("export GPU_RENTAL_API_URL=http://127.0.0.1:8765 GPU_RENTAL_API_KEY=local-dev-key-1\n  $ npx gpu-rental spend --label train"))
    .action(async (options) => {
      await load.spend().runSpend({ olderThan: options.olderThan, label: options.label, tokenPrefix: options.tokenPrefix }, !!options.json, load.account().accountFromEnvironment("spend"), options.stack);
    });
}

function logsCommand(): Command {
  return new Command("logs")
    .summary("what an instance's container printed")
    .description(
      "What instance ID's container printed (its onstart, its processes), as the service keeps it; with --daemon the service's lines about the " +
        "instance (its starts and stops, the commands and copies it ran). The account: GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY.",
    )
    .argument("<id>", "the instance's id", number(1, Number.MAX_SAFE_INTEGER, true))
    .option("--tail <n>", "only the last N lines", number(1, 1_000_000, true))
    .option("--filter <text>", "only the lines containing TEXT")
    .option("--daemon", "the service's lines about the instance instead of its container's output")
    .addHelpText("after", example("export GPU_RENTAL_API_URL=http://127.0.0.1:8765 GPU_RENTAL_API_KEY=local-dev-key-1\n  $ npx gpu-rental logs 4000001 --tail 50"))
    .action(async (id: number, options) => {
      await load.logs().runLogs(id, { tail: options.tail, filter: options.filter, daemon: !!options.daemon }, load.account().accountFromEnvironment("logs"));
    });
}

function jobCommand(): Command {
  const common = (command: Command) =>
    command
      .argument("<file>", "the job file (YAML; docs/jobs.md)")
      .option("--json", "print the report as JSON (progress goes to stderr)")
      .option("--state <file>", "where the watcher's state is kept (default .gpu-rental/job-<name>.json beside the job file)")
      .option("--emulated-time", "rehearse on the emulator: waits move its clock (its control API) instead of passing");
  const run = common(new Command("run"))
    .summary("run a job to its end: rent, start, resume after outbids, report")
    .description(
      "Run a job file's command to completion on rented GPUs: interruptible with a bid ceiling (raised after an outbid, or another machine " +
        "rented) or on demand, checkpoints on a network volume mounted on each instance. Progress as it goes; exit code 1 unless the job " +
        "succeeds. A job whose state is kept (a watcher that died) is taken over, not rented again. The account: GPU_RENTAL_API_URL and GPU_RENTAL_API_KEY.",
    )
    .addHelpText("after", example("npx gpu-rental job run examples/interruptible-job/job.yaml --json > report.json"))
    .action(async (file, options) => void (await load.job().runJobCommand(file, options, load.account().accountFromEnvironment("job"))));
  const status = common(new Command("status"))
    .summary("a job's state as its watcher kept it, and its instance")
    .action(async (file, options) => void (await load.job().jobStatusCommand(file, options, load.account().accountFromEnvironment("job"))));
  const cancel = common(new Command("cancel"))
    .summary("cancel a job: its instance destroyed, nothing left billing")
    .action(async (file, options) => void (await load.job().jobCancelCommand(file, options, load.account().accountFromEnvironment("job"))));
  return new Command("job").summary("jobs that survive outbids: run, status, cancel").addCommand(run).addCommand(status).addCommand(cancel);
}

function pluginCommand(): Command {
  const install = new Command("install")
    .summary("install the gpu-rental provider plugin into your Pulumi plugins")
    .description(
      "Install the gpu-rental provider plugin of this package into your Pulumi plugins ($PULUMI_HOME, default ~/.pulumi): programs in every " +
        "Pulumi language can then use the gpu-rental:index:* resources, and `pulumi package add gpu-rental` generates their SDK. It keeps " +
        "working when this folder is removed. Uses the pulumi on PATH (or the toolchain's).",
    )
    .addHelpText("after", example("npx gpu-rental plugin install && pulumi package add gpu-rental"))
    .action(() => {
      const pulumi = path.join(ensureToolchain().bin, "pulumi");
      const { name, version, dir } = load.pluginInstall().installPlugin({ pulumi, env: process.env });
      console.log(`${name} ${version} ${dir}`);
    });
  return new Command("plugin")
    .summary("the gpu-rental provider plugin (Python, Go and YAML programs)")
    .description("The gpu-rental provider plugin, which programs in every Pulumi language use.")
    .addCommand(install)
    .addHelpText("after", example("npx gpu-rental plugin install"));
}

function toolchainCommand(): Command {
  return new Command("toolchain")
    .summary("find or build pulumi and its language hosts; --env puts them on PATH")
    .description(
      `Find pulumi (v3.248.0) with language hosts for ${LANGUAGES.join(", ")} on PATH, or build them from Pulumi's published Go modules ` +
        "(gpu-rental's own host for Node.js, Python and Go; Pulumi's for YAML) and cache them. Prints the folder holding them; with --env, " +
        "the shell line that puts it on PATH. Progress goes to stderr.",
    )
    .option("--env", "print `export PATH=...` for eval in a POSIX shell, instead of the folder")
    .addHelpText("after", example('eval "$(npx gpu-rental toolchain --env)"   # then pulumi is on PATH in this shell'))
    .action((options) => {
      const { bin } = ensureToolchain({ languages: LANGUAGES });
      console.log(options.env ? `export PATH=${shellQuote(bin)}"\${PATH:+:$PATH}"` : bin);
    });
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function example(...lines: string[]): string {
  return `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((line) => `  $ ${line}`).join("\n")}`;
}

/**
 * Runs `gpu-rental <argv>`; resolves with the exit code: 0, 1 for a failure (its message printed, naming the
 * command), 2 for a command line that cannot be read (commander printed why, and the command's usage).
 */
export async function main(argv: string[]): Promise<number> {
  const cli = program();
  try {
    await cli.parseAsync(argv, { from: "user" });
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const command = argv.find((arg) => cli.commands.some((c) => c.name() === arg));
    console.error(`gpu-rental${command ? ` ${command}` : ""}: ${(error as Error)?.message ?? error}`);
    return 1;
  }
}

/**
 * `gpu-rental <argv>` as a process: runs main, then exits with its code; output piped into a reader that stopped
 * reading (`gpu-rental emulator --help | head`) ends it quietly. bin/gpu-rental.js and the release's executable
 * (release/executable.ts) run the command so.
 */
export function run(argv: string[]): void {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  main(argv).then(
    (code) => process.exit(code),
    (error) => {
      console.error(`gpu-rental: ${(error && error.stack) || error}`);
      process.exit(1);
    },
  );
}
