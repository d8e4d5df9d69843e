import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { PLUGIN_EXECUTABLE } from "../provider/plugin/names";
import { runPulumi } from "../cli/pulumi";
import { ensureToolchain } from "../cli/toolchain";
import { PACKAGE_ROOT } from "../sdk/package-root";
import { PLUGIN_DOWNLOAD_URL } from "../provider/schema/schema";
import { buildWheel, generateSdk } from "./sdks";
import { archiveName, hostPlatform, makePluginArchives, PLATFORMS } from "./archives";
import { onlyPulumiFromPyPI, withCommand } from "./python-sdk";

/**
 * `npm run release -- --out DIR [--download-url URL]`: what a release publishes, into DIR. The plugin archives
 * (archives.ts), the schema the plugin itself serves (asked of the built executable) with `pluginDownloadURL` set
 * to URL, and from that schema the Python SDK's wheel and the Go SDK's module folder, both naming URL, so the
 * engine downloads the plugin from there the first time a program needs it. Without --download-url, the
 * project's GitHub releases (PLUGIN_DOWNLOAD_URL). docs/plugin.md, Releases.
 */
export interface ReleaseOptions {
  out: string;
  downloadUrl?: string;
  /** A folder holding this version's plugin archives, made before by makePluginArchives: copied, not built again. */
  archivesFrom?: string;
  log?: (line: string) => void;
}

export interface Release {
  version: string;
  downloadUrl: string;
  archives: string[];
  schema: string;
  wheel: string;
  /** The Go SDK's module folder, or why it was not made. */
  go: { dir: string } | { notMade: string };
}

export async function release(options: ReleaseOptions): Promise<Release> {
  const log = options.log ?? ((line: string) => console.log(line));
  const downloadUrl = checkedDownloadUrl(options.downloadUrl ?? PLUGIN_DOWNLOAD_URL);
  const version = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")).version as string;
  const out = path.resolve(options.out);
  fs.mkdirSync(out, { recursive: true });
  log(`gpu-rental release v${version} into ${out}; the engine downloads the plugin from ${downloadUrl}`);
  const archives = options.archivesFrom ? copyArchives(options.archivesFrom, out, version) : await makePluginArchives(out, version, { log });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-release-sdks-"));
  try {
    const schema = path.join(out, "schema.json");
    fs.writeFileSync(schema, `${JSON.stringify({ ...(await servedSchema(path.join(out, archiveName(version, hostPlatform())), version, work)), pluginDownloadURL: downloadUrl }, null, 2)}\n`);
    log(`schema: ${schema}`);
    const wheel = await pythonWheel(schema, downloadUrl, out);
    log(`python: ${wheel}`);
    const go = await goModule(schema, work, out);
    log("dir" in go ? `go: ${go.dir}` : `go: not made: ${go.notMade}`);
    return { version, downloadUrl, archives, schema, wheel, go };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** A URL the engine can download from (its own forms), else an error that names them. */
export function checkedDownloadUrl(url: string): string {
  const forms = "an http(s):// URL of the folder that will serve the archives (e.g. https://example.com/gpu-rental/), or github://api.github.com/<owner>/<repository> for the assets of its GitHub releases";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--download-url ${JSON.stringify(url)} is not a URL: give ${forms}.`);
  }
  const ok = ["http:", "https:"].includes(parsed.protocol) ? parsed.host !== "" : ["github:", "gitlab:"].includes(parsed.protocol) && parsed.pathname.split("/").filter(Boolean).length >= 2;
  if (!ok) throw new Error(`--download-url ${JSON.stringify(url)} is not a place the engine downloads plugins from: give ${forms}.`);
  return url;
}

function copyArchives(from: string, out: string, version: string): string[] {
  const names = PLATFORMS.map((platform) => archiveName(version, platform)).filter((name) => fs.existsSync(path.join(from, name)));
  if (!names.some((name) => name === archiveName(version, hostPlatform()))) throw new Error(`${from} has no ${archiveName(version, hostPlatform())}`);
  return names.map((name) => {
    const to = path.join(out, name);
    fs.rmSync(to, { force: true });
    try {
      fs.linkSync(path.join(from, name), to);
    } catch {
      fs.copyFileSync(path.join(from, name), to);
    }
    return to;
  });
}

/** The schema the plugin in `archive` serves (`pulumi package get-schema` runs it): the one source of the SDKs. */
async function servedSchema(archive: string, version: string, work: string): Promise<Record<string, unknown>> {
  const dir = path.join(work, "plugin");
  fs.mkdirSync(dir);
  const untar = spawnSync("tar", ["-xzf", archive, "-C", dir], { encoding: "utf8" });
  if (untar.status !== 0) throw new Error(`tar -xzf ${archive} failed: ${untar.stderr}`);
  const ws = { toolchain: ensureToolchain(), projectDir: work, stateDir: path.join(work, "state") };
  const result = await runPulumi(ws, ["package", "get-schema", path.join(dir, PLUGIN_EXECUTABLE)]);
  if (result.code !== 0) throw new Error(`pulumi package get-schema of the built plugin failed:\n${result.stdout}\n${result.stderr}`.trimEnd());
  const schema = JSON.parse(result.stdout);
  if (schema.version !== version) throw new Error(`the built plugin serves version ${schema.version}, not the package's ${version}`);
  return schema;
}

/**
 * The Python SDK generated from a release's schema for `downloadUrl`, as a wheel in `out`: both places where the
 * SDK names the server (pulumi-plugin.json, which the language host reads, and the resources' default option)
 * say `downloadUrl`.
 */
async function pythonWheel(schemaFile: string, downloadUrl: string, out: string): Promise<string> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-wheel-"));
  try {
    const schema = path.join(work, "schema.json");
    fs.writeFileSync(schema, JSON.stringify({ ...JSON.parse(fs.readFileSync(schemaFile, "utf8")), pluginDownloadURL: downloadUrl }));
    await generateSdk("python", work, schema);
    const manifest = JSON.parse(fs.readFileSync(path.join(work, "python", "pulumi_gpu_rental", "pulumi-plugin.json"), "utf8"));
    if (manifest.server !== downloadUrl) throw new Error(`the Python SDK's pulumi-plugin.json names server ${JSON.stringify(manifest.server)}, not ${downloadUrl}`);
    onlyPulumiFromPyPI(path.join(work, "python"));
    withCommand(path.join(work, "python"));
    const built = buildWheel(path.join(work, "python"), path.join(work, "wheels"));
    fs.mkdirSync(out, { recursive: true });
    const wheel = path.join(out, path.basename(built));
    fs.renameSync(built, wheel);
    return wheel;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The Go SDK generated from the schema into `out/go`, a module folder (go.mod beside the package, written when
 * the generator writes none). Go code generation lives in the Go language host: without one in the toolchain,
 * the reason is reported instead, and the rest of the release stands.
 */
async function goModule(schema: string, work: string, out: string): Promise<{ dir: string } | { notMade: string }> {
  try {
    await generateSdk("go", work, schema);
  } catch (error) {
    const hasHost = fs.existsSync(path.join(ensureToolchain().bin, "pulumi-language-go"));
    const said = (error as Error).message.split("\n").map((line) => line.trim()).filter((line) => /error/i.test(line))[0] ?? (error as Error).message.split("\n")[0];
    return { notMade: `${hasHost ? "" : "the toolchain has no Go language host (pulumi-language-go), which generates Go SDKs; "}pulumi package gen-sdk said: ${said}` };
  }
  const dir = path.join(out, "go");
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(path.join(work, "go"), dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, "go.mod"))) {
    const importBase: string = JSON.parse(fs.readFileSync(schema, "utf8")).language.go.importBasePath;
    fs.writeFileSync(path.join(dir, "go.mod"), `module ${path.posix.dirname(importBase)}\n\ngo 1.22\n\nrequire github.com/pulumi/pulumi/sdk/v3 v3.248.0\n`);
  }
  return { dir };
}

if (require.main === module) {
  (async () => {
    const usage = "npm run release -- --out DIR [--download-url URL]";
    let values: { out?: string; "download-url"?: string };
    try {
      ({ values } = parseArgs({ options: { out: { type: "string" }, "download-url": { type: "string" } }, strict: true }));
    } catch (error) {
      throw new Error(`${(error as Error).message}. Usage: ${usage}`);
    }
    if (!values.out) throw new Error(`give the folder to write the release into: ${usage}`);
    await release({ out: values.out, downloadUrl: values["download-url"] });
  })().catch((error) => {
    console.error(`release failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
