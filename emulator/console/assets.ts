import * as fs from "node:fs";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../../sdk/package-root";

/**
 * The libraries' own prebuilt files the console's page loads, from the package's dependencies (uPlot, and htm with
 * Preact in one file): each asset's dependency and its file there. The release's executable carries them, and the
 * page's built script, among the package files it unpacks (release/bundle.ts).
 */
export const CONSOLE_LIBRARIES: Record<string, { dependency: string; file: string; type: string }> = {
  "uplot.js": { dependency: "uplot", file: "dist/uPlot.iife.min.js", type: "text/javascript; charset=utf-8" },
  "uplot.css": { dependency: "uplot", file: "dist/uPlot.min.css", type: "text/css; charset=utf-8" },
  "preact.js": { dependency: "htm", file: "preact/standalone.umd.js", type: "text/javascript; charset=utf-8" },
};

/** The page's script as built with the rest of the package (`npm run build`), in the package's folder. */
export const CONSOLE_SCRIPT = path.join("dist", "emulator", "console", "browser", "app.js");

/**
 * A file of a dependency, looked for in node_modules from the package's folder upwards as Node resolves packages
 * (by folder, not by require.resolve: htm's exports map names no file of its standalone build).
 */
export function dependencyFile(dependency: string, file: string): string {
  for (let dir = PACKAGE_ROOT; ; dir = path.dirname(dir)) {
    const found = path.join(dir, "node_modules", dependency, file);
    if (fs.existsSync(found)) return found;
    if (dir === path.dirname(dir)) throw new Error(`${dependency}/${file} is not installed beside gpu-rental (${PACKAGE_ROOT}): reinstall the package.`);
  }
}
