import { configureProvider } from "./configure";
import { exitWithEngine } from "./exit-with-engine";
import { pluginMethods } from "./methods";
import { GpuRentalProvider } from "./provider";
import { configureLifecycle, ProcessStop, REGISTRY } from "../lifecycle";
import { programWords, schemaNames, speakingProgramWords } from "./program-words";
import { fromPulumi } from "../pulumi-modules";
import { infoEngine } from "../engine-log";
import { serve, serverModules } from "../provider-server";
import { packageSchema } from "../schema/schema";

/** The plugin's version: the package's (read from dist/provider/plugin/; the executable's bundle has it built in). */
export const VERSION: string = require("../../../package.json").version;

/** Serves the `gpu-rental` provider to the engine (the entry of the plugin folder, `plugin/` of the package). */
export function main(): Promise<void> {
  const stop = new ProcessStop();
  const words = programWords(() => schemaNames(packageSchema(VERSION)));
  const provider = new GpuRentalProvider(VERSION, stop, REGISTRY, words);
  // Progress lines go to the engine (which shows no plugin's stderr), one after another, in order.
  let said = Promise.resolve();
  const write = (line: string, urn?: string) => void (said = said.then(() => infoEngine([line], urn)));
  const configure = (settings: Record<string, unknown>) => provider.configured(configureLifecycle(configureProvider(settings, VERSION), { stop, write }));
  // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
  stop.onSignals();
  // Before the server is made: it watches the server's connections, and ends the process as a signal does.
  exitWithEngine();
  // gRPC and the protocol's messages alone (provider/provider-server.ts), not @pulumi/pulumi's provider server,
  // which loads much of the SDK first: every `up` of a Python, Go or YAML program waits for the plugin's start.
  const m = serverModules(fromPulumi);
  return serve(m, pluginMethods(m, speakingProgramWords(provider, words), configure));
}
