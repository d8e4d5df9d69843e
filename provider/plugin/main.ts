import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { configureProvider } from "./configure";
import { patchProviderServer } from "./engine-patches";
import { GpuRentalProvider } from "./provider";

/** The plugin's version: the package's. */
export const VERSION: string = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8")).version;

/** Serves the `gpu-rental` provider to the engine (the entry of the plugin folder, `plugin/` of the package). */
export function main(args: string[] = process.argv.slice(2)): Promise<void> {
  patchProviderServer(configureProvider);
  return pulumi.provider.main(new GpuRentalProvider(VERSION), args);
}
