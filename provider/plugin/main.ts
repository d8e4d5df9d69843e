import { main as serve } from "@pulumi/pulumi/provider";
import { configureProvider } from "./configure";
import { exitWithEngine } from "./exit-with-engine";
import { patchProviderServer } from "./engine-patches";
import { GpuRentalProvider } from "./provider";
import { programWords, schemaNames, speakingProgramWords } from "./program-words";
import { packageSchema } from "../schema/schema";

/** The plugin's version: the package's (read from dist/provider/plugin/; the executable's bundle has it built in). */
export const VERSION: string = require("../../../package.json").version;

/** Serves the `gpu-rental` provider to the engine (the entry of the plugin folder, `plugin/` of the package). */
export function main(args: string[] = process.argv.slice(2)): Promise<void> {
  patchProviderServer((settings) => configureProvider(settings, VERSION));
  // Before the server is made: it watches the server's connections.
  exitWithEngine();
  // The provider server alone, not the whole of @pulumi/pulumi (its runtime for programs): the plugin starts some
  // 0.35 s sooner, and every `up` waits for that start.
  const words = programWords(() => schemaNames(packageSchema(VERSION)));
  return serve(speakingProgramWords(new GpuRentalProvider(VERSION, words), words), args);
}
