import * as fs from "node:fs";
import * as path from "node:path";
import { main as serve } from "@pulumi/pulumi/provider";
import { configureProvider } from "./configure";
import { patchProviderServer } from "./engine-patches";
import { GpuRentalProvider } from "./provider";
import { stopOnSignals } from "../../sdk/resources/provider-process";

/** The plugin's version: the package's. */
export const VERSION: string = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8")).version;

/** Serves the `gpu-rental` provider to the engine (the entry of the plugin folder, `plugin/` of the package). */
export function main(args: string[] = process.argv.slice(2)): Promise<void> {
  patchProviderServer(configureProvider);
  // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
  stopOnSignals();
  // The provider server alone, not the whole of @pulumi/pulumi (its runtime for programs): the plugin starts some
  // 0.35 s sooner, and every `up` waits for that start.
  return serve(new GpuRentalProvider(VERSION), args);
}
