import * as crypto from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import type { Plugin } from "esbuild";
import { publishedFiles } from "../cli/plugin-install";
import { PLUGIN_EXECUTABLE } from "../provider/plugin/names";
import { CONSOLE_LIBRARIES, CONSOLE_SCRIPT, dependencyFile } from "../emulator/console/assets";
import type { EmbeddedFile } from "../sdk/embedded-package";
import { PACKAGE_ROOT } from "../sdk/package-root";
import { PULUMI_MODULES } from "../provider/pulumi-modules";

/**
 * The release's executable as one CommonJS file with every dependency inside (no node_modules, no require of
 * anything but Node's own modules): what a single executable application runs, the provider plugin and the
 * `gpu-rental` command (./executable.ts). Made from the compiled package (dist/, so `npm run build` first) by esbuild.
 */
export async function bundlePlugin(outFile: string): Promise<void> {
  await withEsbuild((esbuild) =>
    esbuild.build({
      ...COMMON,
      entryPoints: [path.join(PACKAGE_ROOT, "dist", "release", "executable.js")],
      outfile: outFile,
      plugins: [pulumiModulesBuiltIn(), packageRootBuiltIn(), nativeAddonsAbsent()],
      // ssh2 once: in the executable sdk/ssh2.ts finds no bundle beside it and requires `ssh2`, which is that bundle.
      alias: { ssh2: path.join(PACKAGE_ROOT, "dist", "sdk", "ssh2-bundle.js") },
      // Run by a machine's own Node.js (the launchers of other platforms), an older one would fail obscurely.
      banner: { js: NODE_CHECK },
    }),
  );
}

/**
 * ssh2 and its dependencies as one file of the package (sdk/ssh2.ts loads it): ssh2's install script compiles an
 * optional native crypto binding, and cpu-features, its optional dependency, compiles another. Bundled, a user's
 * `npm install gpu-rental` runs no script and compiles nothing (quicker, no compiler needed, no npm warning
 * of scripts to review), and ssh2 uses Node's crypto and its own JavaScript, as it does wherever the build fails.
 * The licenses of the bundled packages lead the file.
 */
export async function bundleSsh2(outFile: string): Promise<void> {
  const entry = require.resolve("ssh2", { paths: [PACKAGE_ROOT] });
  await withEsbuild(async (esbuild) => {
    const { metafile, outputFiles } = await esbuild.build({ ...COMMON, entryPoints: [entry], outfile: outFile, write: false, metafile: true, plugins: [nativeAddonsAbsent()] });
    fs.writeFileSync(outFile, `${licensesOf(Object.keys(metafile.inputs))}\n${outputFiles[0].text}`);
  });
}

const COMMON = { bundle: true, platform: "node", format: "cjs", target: "node20", logLevel: "error" } as const;

async function withEsbuild<T>(use: (esbuild: typeof import("esbuild")) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: a devDependency, which the package's users (who never bundle) do not install.
  const esbuild: typeof import("esbuild") = require("esbuild");
  try {
    return await use(esbuild);
  } finally {
    // esbuild's service process would otherwise outlive the build in a process that goes on (a test run's).
    await esbuild.stop();
  }
}

/** One comment holding the license of every package whose files are in a bundle (by its inputs' paths). */
function licensesOf(inputs: string[]): string {
  const packages = new Set(inputs.flatMap((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []));
  const texts = [...packages].sort().map((dir) => {
    const { name, version, license, licenses } = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, dir, "package.json"), "utf8"));
    const file = fs.readdirSync(path.join(PACKAGE_ROOT, dir)).find((entry) => /^(licen[cs]e|copying)/i.test(entry));
    if (!file) throw new Error(`${name} has no license file to bundle with it`);
    return `${name} ${version} (${license ?? licenses?.map((entry: { type: string }) => entry.type).join(", ")}):\n\n${fs.readFileSync(path.join(PACKAGE_ROOT, dir, file), "utf8").trim()}`;
  });
  return `/*!\n * Bundled packages and their licenses.\n *\n${texts.join("\n\n").replaceAll("*/", "* /").split("\n").map((line) => ` * ${line}`.trimEnd()).join("\n")}\n */`;
}

const NODE_CHECK = `if (Number(process.versions.node.split(".")[0]) < 20) {
  process.stderr.write("gpu-rental's provider plugin needs Node.js 20 or later, and this is Node.js " + process.version + ": install Node.js 20+ (or put it first on PATH).\\n");
  process.exit(1);
}`;

/**
 * ssh2's optional native addons (its crypto binding, and cpu-features, a probe of the processor that only orders
 * ciphers), which it requires in a try and does without: a bundle cannot hold a .node file, and a require of one
 * left in it is a require of a file, which the executable's require() refuses, and Node 20 warns on stderr at the
 * first such call (at every start, as ssh2 loads), even though ssh2 catches the error. Each is bundled as a module
 * that throws what a missing module throws, so the bundle requires nothing but Node's own modules and ssh2 falls
 * back to its JavaScript crypto, quietly.
 */
function nativeAddonsAbsent(): Plugin {
  return {
    name: "native-addons-absent",
    setup(build) {
      build.onResolve({ filter: /\.node$|^cpu-features$/ }, (args) => ({ path: args.path, namespace: "native-addon" }));
      build.onLoad({ filter: /.*/, namespace: "native-addon" }, (args) => ({
        contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}' (a native addon, not in the bundle)`)}), { code: "MODULE_NOT_FOUND" });`,
        loader: "js",
      }));
    },
  };
}

/**
 * provider/pulumi-modules resolves its modules from @pulumi/pulumi at run time (createRequire), which a bundle
 * cannot follow: in the bundle it is a table of the same modules, resolved the same way now, so each is the
 * very file @pulumi/pulumi's provider server requires (one copy in the bundle, the patched one).
 */
function pulumiModulesBuiltIn(): Plugin {
  const fromPulumi = createRequire(require.resolve("@pulumi/pulumi", { paths: [PACKAGE_ROOT] }));
  const table = PULUMI_MODULES.map((id) => `  ${JSON.stringify(id)}: () => require(${JSON.stringify(fromPulumi.resolve(id))}),`);
  return moduleInPlace("pulumi-modules", `const modules = {\n${table.join("\n")}\n};\nexports.PULUMI_MODULES = Object.keys(modules);\nexports.fromPulumi = (id) => modules[id]();\n`);
}

/**
 * sdk/package-root finds the package's folder around it, which the executable does not have: in the bundle, the
 * package files the command runs or serves are built in (embeddedFiles) and the package root is where they are
 * unpacked (sdk/embedded-package.ts); the release's executable is this process's own file (a single executable
 * application), or the launcher beside the bundle, which runs node on it.
 */
function packageRootBuiltIn(): Plugin {
  const files = embeddedFiles();
  const key = crypto.createHash("sha256").update(JSON.stringify(files)).digest("hex").slice(0, 12);
  const unpack = JSON.stringify(path.join(PACKAGE_ROOT, "dist", "sdk", "embedded-package.js"));
  // The root is unpacked when first read: the plugin, which this executable is too, reads none of it.
  const contents = `const path = require("node:path");
const sea = (() => { try { return require("node:sea").isSea(); } catch { return false; } })();
exports.RELEASE_EXECUTABLE = sea ? process.execPath : path.join(__dirname, process.platform === "win32" ? "${PLUGIN_EXECUTABLE}.cmd" : "${PLUGIN_EXECUTABLE}");
exports.RELEASE_COMMAND = sea ? [process.execPath] : [process.execPath, __filename];
let root;
Object.defineProperty(exports, "PACKAGE_ROOT", { enumerable: true, get: () => (root ??= require(${unpack}).unpackedPackage(${JSON.stringify(files)}, ${JSON.stringify(key)})) });
`;
  return moduleInPlace("package-root", contents);
}

/**
 * What the executable's command reads of the package (its other files are built into the bundle itself): its
 * manifest, the toolchain's scripts and sources (tools/ as the package publishes them) with the built files the
 * toolchain installs beside `pulumi`, and the console's scripts and styles.
 */
function embeddedFiles(): Record<string, EmbeddedFile> {
  const consoleFiles = [CONSOLE_SCRIPT, ...Object.values(CONSOLE_LIBRARIES).map(({ dependency, file }) => path.relative(PACKAGE_ROOT, dependencyFile(dependency, file)))];
  const toolchain = publishedFiles().filter((file) => file.startsWith("tools/"));
  const installed = ["dynamic-host", "provider-server"].map((name) => path.join("dist", "provider", `${name}.js`));
  const embedded: Record<string, EmbeddedFile> = {};
  for (const file of ["package.json", ...toolchain, ...installed, ...consoleFiles]) {
    const full = path.join(PACKAGE_ROOT, file);
    embedded[file.split(path.sep).join("/")] = { text: fs.readFileSync(full, "utf8"), mode: fs.statSync(full).mode & 0o777 };
  }
  return embedded;
}

/** Puts `contents` in the place of a module of the package, by its file's name (`pulumi-modules`: provider/pulumi-modules.ts). */
function moduleInPlace(name: string, contents: string): Plugin {
  return {
    name,
    setup(build) {
      build.onResolve({ filter: new RegExp(`[/\\\\]${name}(\\.js)?$`) }, () => ({ path: name, namespace: name }));
      build.onLoad({ filter: /.*/, namespace: name }, () => ({ contents, loader: "js", resolveDir: PACKAGE_ROOT }));
    },
  };
}
