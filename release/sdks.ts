import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PACKAGE_PLUGIN_DIR, PLUGIN_EXECUTABLE } from "../provider/plugin/names";
import { runPulumi } from "../cli/pulumi";
import { ensureToolchain } from "../cli/toolchain";
import { PACKAGE_ROOT } from "../sdk/package-root";

/**
 * The SDK packages a release publishes, generated from the plugin's schema by `pulumi package gen-sdk` (the
 * plugin's executable is run, and asked for its schema), and the Python wheel built from the Python SDK.
 *
 *   npm run sdks [-- OUT_DIR]        (default ./sdks: OUT_DIR/python, OUT_DIR/go, OUT_DIR/wheels; OUT_DIR/dotnet and
 *                                    OUT_DIR/java where the machine has their language hosts)
 */
export const SDK_LANGUAGES = ["python", "go", "dotnet", "java"] as const;
export type SdkLanguage = (typeof SDK_LANGUAGES)[number];

/**
  * Why a language's SDK cannot be generated where the toolchain has no host for it: its code generator lives in
  * its language host, and no registry here serves those hosts (nor `dotnet`).
  */
export const UNAVAILABLE: Partial<Record<SdkLanguage, string>> = {
  dotnet: "no pulumi-language-dotnet here: Pulumi's .NET host and code generator (pulumi-dotnet) are not served by the Go module proxy, and there is no dotnet to build or test the SDK with; where Pulumi is installed with its .NET host, npm run sdks generates it",
  java: "no pulumi-language-java here: Pulumi's Java host and code generator (pulumi-java) are not served by the Go module proxy; where Pulumi is installed with its Java host, npm run sdks generates it",
};

/** The reason `language`'s SDK cannot be generated with the toolchain (no host for it), or undefined when it can. */
export function unavailable(language: SdkLanguage): string | undefined {
  const host = path.join(ensureToolchain({ languages: ["python", "go"] }).bin, `pulumi-language-${language}`);
  return fs.existsSync(host) ? undefined : (UNAVAILABLE[language] ?? `no pulumi-language-${language} beside pulumi`);
}

/**
 * Generates one language's SDK into `outDir/<language>` from `source` (a plugin's executable, which is asked for
 * its schema, or a schema file); the CLI's own words when it cannot.
 */
export async function generateSdk(language: SdkLanguage, outDir: string, source = path.join(PACKAGE_PLUGIN_DIR, PLUGIN_EXECUTABLE)): Promise<void> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-gen-sdk-"));
  try {
    const ws = { toolchain: ensureToolchain({ languages: ["python", "go"] }), projectDir: PACKAGE_ROOT, stateDir };
    const result = await runPulumi(ws, ["package", "gen-sdk", source, "--language", language, "--out", outDir]);
    const written = fs.existsSync(path.join(outDir, language)) && fs.readdirSync(path.join(outDir, language)).length > 0;
    if (result.code !== 0 || !written) throw new Error(`pulumi package gen-sdk --language ${language} failed:\n${result.stdout}\n${result.stderr}`.trimEnd());
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Builds the wheel of a generated Python SDK into `wheelsDir` (pip fetches setuptools for the build); its path. */
export function buildWheel(pythonSdkDir: string, wheelsDir: string, python = process.env.PYTHON ?? "python3"): string {
  fs.mkdirSync(wheelsDir, { recursive: true });
  const result = spawnSync(python, ["-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", wheelsDir, pythonSdkDir], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`pip wheel ${pythonSdkDir} failed:\n${result.stdout}\n${result.stderr}`);
  const wheel = fs.readdirSync(wheelsDir).find((f) => f.startsWith("pulumi_gpu_rental-") && f.endsWith(".whl"));
  if (!wheel) throw new Error(`pip wheel made no pulumi_gpu_rental wheel in ${wheelsDir}`);
  return path.join(wheelsDir, wheel);
}

if (require.main === module) {
  (async () => {
    const outDir = path.resolve(process.argv[2] ?? path.join(PACKAGE_ROOT, "sdks"));
    let failed = 0;
    for (const language of SDK_LANGUAGES) {
      const skip = unavailable(language);
      if (skip) {
        console.log(`${language}: skipped (${skip})`);
        continue;
      }
      try {
        await generateSdk(language, outDir);
        console.log(`${language}: ${path.join(outDir, language)}`);
      } catch (error) {
        failed++;
        console.error(`${language}: ${(error as Error).message}`);
      }
    }
    if (fs.existsSync(path.join(outDir, "python"))) console.log(`wheel: ${buildWheel(path.join(outDir, "python"), path.join(outDir, "wheels"))}`);
    process.exit(failed ? 1 : 0);
  })().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
