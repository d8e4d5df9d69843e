import { main as serve } from "@pulumi/pulumi/provider";
import { configureProvider } from "./configure";
import { exitWithEngine } from "./exit-with-engine";
import { patchProviderServer } from "./engine-patches";
import { GpuRentalProvider } from "./provider";
import { configureLifecycle, ProcessStop, REGISTRY } from "../lifecycle";
import { programWords, schemaNames, speakingProgramWords } from "./program-words";
import { packageSchema } from "../schema/schema";

/** The plugin's version: the package's (read from dist/provider/plugin/; the executable's bundle has it built in). */
export const VERSION: string = require("../../../package.json").version;

/** Serves the `gpu-rental` provider to the engine (the entry of the plugin folder, `plugin/` of the package). */
export function main(args: string[] = process.argv.slice(2)): Promise<void> {
  const stop = new ProcessStop();
  const words = programWords(() => schemaNames(packageSchema(VERSION)));
  const provider = new GpuRentalProvider(VERSION, stop, REGISTRY, words);
  patchProviderServer((settings) => provider.configured(configureLifecycle(configureProvider(settings, VERSION), { stop })));
  // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
  stop.onSignals();
  // Before the server is made: it watches the server's connections, and ends the process as a signal does.
  exitWithEngine();
  // The provider server alone, not the whole of @pulumi/pulumi (its runtime for programs): the plugin starts some
  // 0.35 s sooner, and every `up` waits for that start.
  return serve(speakingProgramWords(provider, words), args);
}
