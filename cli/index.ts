import { parseArgs } from "node:util";
import { runDeploy } from "./deploy";
import { runEmulatorCommand } from "./emulator";
import { ensureToolchain } from "./toolchain";

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
             --data-dir DIR      keep state in DIR across restarts (crash-safe); memory only without it
  deploy     The main job: deploy the root Pulumi stack against the embedded emulator, show the outputs,
             destroy it. --keep keeps the stack and the emulator up until Ctrl-C; --contention P as above.
  toolchain  Build (or find) pulumi v3.248.0 and its Node language host; prints their folder.
`;

function number(value: string | undefined, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
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
        "no-control": { type: "boolean" }, "data-dir": { type: "string" },
      },
    });
    if (values["api-key"] !== undefined && !/^[\w.-]{8,}$/.test(values["api-key"])) {
      throw new UsageError("--api-key must be at least 8 characters of letters, digits, '.', '_' or '-'");
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
      dataDir: values["data-dir"],
    });
    return;
  }
  if (command === "deploy") {
    const { values } = parseArgs({
      args: rest,
      options: { keep: { type: "boolean" }, contention: { type: "string" }, stack: { type: "string" } },
    });
    await runDeploy({ keep: !!values.keep, contention: number(values.contention, "contention", 0, 1) ?? 0, stack: values.stack ?? "dev" });
    return;
  }
  if (command === "toolchain") {
    console.log(ensureToolchain());
    return;
  }
  throw new UsageError(`Unknown command ${JSON.stringify(command)}.\n\n${USAGE}`);
}
