import type { ChannelCredentials } from "@grpc/grpc-js";
import type { EngineClient } from "@pulumi/pulumi/proto/engine_grpc_pb";
import { fromPulumi } from "./pulumi-modules";

/**
 * Warnings (and a plugin's progress) to the engine as its own diagnostics (`warning:` in the CLI), from a provider process of either shell:
 * a dynamic provider's `pulumi.log` reaches no engine (pulumi/pulumi#6065), so this is a client of the engine's
 * own, at the address the engine started the process with. One client per call, closed after it: nothing of it
 * keeps the process alive.
 */

/** How long a warning may take to reach the engine: a check never waits on it for longer. */
const SEND_MS = 10_000;

/**
 * Sends each message as a warning, of the resource `urn` when the shell knows it (else the engine shows it as the
 * stack's). A warning that cannot be sent is written to stderr instead: never a failed check.
 */
export async function warnEngine(messages: readonly string[], urn = "", args: string[] = process.argv.slice(2)): Promise<void> {
  await logEngine("warning", messages, urn, args);
}

/**
 * Sends each message as information of the resource `urn` (a plugin's progress: the engine shows no plugin's
 * stderr). One that cannot be sent is written to stderr instead.
 */
export async function infoEngine(messages: readonly string[], urn = "", args: string[] = process.argv.slice(2)): Promise<void> {
  await logEngine("info", messages, urn, args);
}

async function logEngine(severity: "warning" | "info", messages: readonly string[], urn: string, args: string[]): Promise<void> {
  if (!messages.length) return;
  try {
    await send(severity, messages, urn, engineAddress(args));
  } catch (error) {
    process.stderr.write(`${severity} (not sent to the engine: ${(error as Error).message}): ${messages.join("\n")}\n`);
  }
}

async function send(severity: "warning" | "info", messages: readonly string[], urn: string, address: string | undefined): Promise<void> {
  if (!address) throw new Error("the process was not given the engine's address");
  const engine = engineApi();
  const client = new engine.EngineClient(address, engine.insecure());
  try {
    for (const message of messages) {
      const request = new engine.LogRequest().setSeverity(engine[severity]).setMessage(message).setUrn(urn);
      await new Promise<void>((resolve, reject) =>
        client.log(request, new engine.Metadata(), { deadline: Date.now() + SEND_MS }, (error) => (error ? reject(error) : resolve())),
      );
    }
  } finally {
    client.close();
  }
}

/** The engine's address among a provider process's arguments, read as @pulumi/pulumi's provider server reads it. */
export function engineAddress(args: string[]): string | undefined {
  return fromPulumi("./provider/internals").parseArgs(args)?.engineAddress;
}

/** The engine's generated gRPC client and messages, and the gRPC they were generated for (@pulumi/pulumi's own). */
function engineApi() {
  const grpc = fromPulumi("@grpc/grpc-js");
  const { LogRequest, LogSeverity } = fromPulumi("./proto/engine_pb");
  return {
    EngineClient: fromPulumi("./proto/engine_grpc_pb").EngineClient as typeof EngineClient,
    LogRequest: LogRequest as typeof import("@pulumi/pulumi/proto/engine_pb").LogRequest,
    warning: LogSeverity.WARNING as import("@pulumi/pulumi/proto/engine_pb").LogSeverity,
    info: LogSeverity.INFO as import("@pulumi/pulumi/proto/engine_pb").LogSeverity,
    Metadata: grpc.Metadata as typeof import("@grpc/grpc-js").Metadata,
    insecure: (): ChannelCredentials => grpc.credentials.createInsecure(),
  };
}
