import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PLUGIN_EXECUTABLE, PLUGIN_NAME } from "../provider/plugin/names";
import { bundlePlugin } from "./bundle";

/**
 * The plugin archives of a release, as the engine downloads them: `pulumi-resource-gpu-rental-v<version>-<os>-<arch>.tar.gz`
 * holding the plugin's executable. For the platform the release runs on, the executable is self-contained: a
 * single executable application (Node's SEA) made of the Node.js running the release and the plugin's bundle,
 * so the user's machine needs no Node.js. An executable of another platform needs that platform's Node.js
 * binary, which the release does not download: each other platform gets the same bundle with a launcher that
 * runs it on the machine's Node.js 20+ and, with none, says what to do. docs/plugin.md, Releases.
 */

/** The platforms the engine names (its `<os>-<arch>`) that a release makes an archive for. */
export const PLATFORMS = ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Node's fuse in its binary that a single executable application flips (the Node.js 20 docs' constant). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
/** The bundle's file beside a launcher. */
const BUNDLE = `${PLUGIN_EXECUTABLE}.js`;

/** This machine, in the engine's words (`linux-amd64`); an error for one the engine has no plugins for. */
export function hostPlatform(): Platform {
  const os = ({ linux: "linux", darwin: "darwin", win32: "windows" } as Record<string, string>)[process.platform];
  const arch = ({ x64: "amd64", arm64: "arm64" } as Record<string, string>)[process.arch];
  const platform = `${os}-${arch}`;
  if (!PLATFORMS.includes(platform as Platform)) throw new Error(`a release cannot be made on ${process.platform}-${process.arch}: the engine downloads plugins for ${PLATFORMS.join(", ")}`);
  return platform as Platform;
}

export function archiveName(version: string, platform: Platform): string {
  return `pulumi-resource-${PLUGIN_NAME}-v${version}-${platform}.tar.gz`;
}

export interface ArchiveOptions {
  /** Make this machine's archive with the self-contained executable (default true). */
  selfContained?: boolean;
  /** The platforms to make the bundle-and-launcher archive for (default: every other one). */
  launchers?: readonly Platform[];
  log?: (line: string) => void;
}

/**
 * Writes the plugin archives into `outDir`, by default every platform's: this machine's with the self-contained
 * executable, the others with the bundle and a launcher. Returns their paths, this machine's first.
 */
export async function makePluginArchives(outDir: string, version: string, options: ArchiveOptions = {}): Promise<string[]> {
  const log = options.log ?? (() => {});
  const host = hostPlatform();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-release-"));
  try {
    fs.mkdirSync(outDir, { recursive: true });
    const bundle = path.join(work, BUNDLE);
    await bundlePlugin(bundle);
    const made: string[] = [];
    /** The archive of `platform`, its files written by `write` into a folder of their own. */
    const pack = async (platform: Platform, write: (dir: string) => Promise<void> | void) => {
      const dir = path.join(work, platform);
      fs.mkdirSync(dir);
      await write(dir);
      made.push(path.join(outDir, archiveName(version, platform)));
      tarGz(dir, made[made.length - 1]);
    };
    if (options.selfContained !== false) {
      log(`plugin: a single executable application for ${host} (Node.js ${process.version} and the bundle, ${megabytes(bundle)})`);
      await pack(host, (dir) => singleExecutable(bundle, path.join(dir, executableName(host))));
      log(`plugin: ${made[0]} (${megabytes(made[0])})`);
    }
    const launchers = options.launchers ?? PLATFORMS.filter((p) => p !== host);
    for (const platform of launchers) await pack(platform, (dir) => writeLauncher(dir, platform, version, bundle));
    if (launchers.length) log(`plugin: ${launchers.join(", ")}: the bundle and a launcher (the machine's Node.js 20+ runs it)`);
    return made;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The name the engine runs in a plugin folder. */
function executableName(platform: Platform): string {
  return platform.startsWith("windows") ? `${PLUGIN_EXECUTABLE}.exe` : PLUGIN_EXECUTABLE;
}

/**
 * Node's single executable application: the running node binary with the bundle injected (postject) as Node
 * 20's docs describe, code cache included (the executable runs on this platform only).
 */
async function singleExecutable(bundle: string, out: string): Promise<void> {
  const dir = path.dirname(out);
  const blob = path.join(dir, "sea-prep.blob");
  const config = path.join(dir, "sea-config.json");
  fs.writeFileSync(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
  must(process.execPath, ["--experimental-sea-config", config], "node --experimental-sea-config");
  fs.copyFileSync(process.execPath, out);
  fs.chmodSync(out, 0o755);
  if (process.platform === "darwin") must("codesign", ["--remove-signature", out], "codesign --remove-signature");
  const postject = path.join(path.dirname(require.resolve("postject/package.json")), "dist", "cli.js");
  const args = [postject, out, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE, ...(process.platform === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [])];
  // postject's ELF library warns of each section name it cannot map (harmless): shown only if it fails.
  must(process.execPath, args, "postject");
  if (process.platform === "darwin") must("codesign", ["--sign", "-", out], "codesign --sign -");
  fs.rmSync(blob);
  fs.rmSync(config);
}

/**
 * A plugin folder for a platform without a self-contained executable: the bundle, and the executable the engine
 * runs, a launcher of `node` on it. Without Node.js 20+ the launcher says what to do (the bundle checks the version).
 */
function writeLauncher(dir: string, platform: Platform, version: string, bundle: string): void {
  fs.copyFileSync(bundle, path.join(dir, BUNDLE));
  const missing =
    `gpu-rental v${version}: this release has no self-contained plugin for ${platform}; its plugin runs on Node.js 20 or later, and there is no node on PATH. ` +
    `Install Node.js 20+ and run the program again, or install the plugin from the npm package: npm install gpu-rental@${version} @pulumi/pulumi@3.248.0, then npx gpu-rental plugin install.`;
  if (platform.startsWith("windows")) {
    const cmd = `@rem gpu-rental's provider plugin on ${platform}: the bundle on the machine's Node.js.\r\n@where node >nul 2>nul || (echo ${missing} 1>&2 & exit /b 1)\r\n@node "%~dp0${BUNDLE}" %*\r\n`;
    fs.writeFileSync(path.join(dir, `${PLUGIN_EXECUTABLE}.cmd`), cmd);
    return;
  }
  const sh = `#!/bin/sh\n# gpu-rental's provider plugin on ${platform}: the bundle on the machine's Node.js.\ncommand -v node >/dev/null 2>&1 || { echo '${missing}' >&2; exit 1; }\nexec node "\${0%/*}/${BUNDLE}" "$@"\n`;
  fs.writeFileSync(path.join(dir, PLUGIN_EXECUTABLE), sh, { mode: 0o755 });
}

/** `dir`'s files, at the archive's top level, as the engine unpacks a plugin archive. */
function tarGz(dir: string, archive: string): void {
  must("tar", ["-czf", archive, "-C", dir, ...fs.readdirSync(dir)], "tar");
}

function must(command: string, args: string[], what: string): void {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${what} failed (exit ${result.status ?? result.error?.message}):\n${result.stdout ?? ""}${result.stderr ?? ""}`.trimEnd());
}

function megabytes(file: string): string {
  return `${(fs.statSync(file).size / 1e6).toFixed(1)} MB`;
}
