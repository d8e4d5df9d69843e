import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "../helpers/paths";
import { linkCopy } from "../helpers/user-program";

const run = promisify(execFile);

/** The files `npm pack` puts in the package, from a fresh clone of the committed tree (as CI and a user have it). */
async function packFreshClone(): Promise<{ files: string[]; manifest: any }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-clone-"));
  try {
    await run("git", ["clone", "--quiet", REPO_ROOT, dir]);
    // The dependencies the clone's lock file pins are those this run's `npm ci` installed from the same lock file:
    // the clone gets them as hard links rather than installing 584 packages again. Not as a symlink: tsc would name
    // their declaration files by the checkout's path, so the build state it keeps for the machine's clones
    // (tools/clone-cache.js) would serve neither them nor this test's next run (a full tsc build instead of an incremental one).
    // Where hard links cannot be made (another file system), a symlink. `npm pack` builds the clone (prepack).
    const modules = path.join(dir, "node_modules");
    await linkCopy(path.join(REPO_ROOT, "node_modules"), modules).catch(() => {
      fs.rmSync(modules, { recursive: true, force: true });
      fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), modules);
    });
    const { stdout } = await run("npm", ["pack", "--json", "--loglevel=error"], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf("[")));
    const manifest = JSON.parse((await run("tar", ["-xzOf", path.join(dir, packed.filename), "package/package.json"])).stdout);
    return { files: packed.files.map((f: { path: string }) => f.path), manifest };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

it("npm pack of a fresh clone gives a complete, built package with only what users need", async () => {
  const { files, manifest } = await packFreshClone();
  // Built: every entry point the exports map names is in it, with its types.
  for (const entry of ["sdk", "provider", "emulator", "cli"]) {
    expect(files).toContain(`dist/${entry}/index.js`);
    expect(files).toContain(`dist/${entry}/index.d.ts`);
  }
  expect(files).toEqual(expect.arrayContaining(["bin/gpu-rental.js", "tools/pulumi-toolchain.sh", "README.md", "LICENSE", "package.json"]));
  // What `gpu-rental toolchain` builds from, where no pulumi is installed: our wrapper modules of Pulumi's published
  // modules (the CLI, the YAML host), our own language host and our stand-in for the CLI's second zxcvbn. No other
  // project's source.
  expect(files).toEqual(
    expect.arrayContaining([
      "tools/pulumi/go.mod", "tools/pulumi/go.sum", "tools/pulumi/tools.go", "tools/pulumi/language-host/main.go",
      "tools/pulumi/language-host/launcher.py", "tools/pulumi/zxcvbn/go.mod", "tools/pulumi/zxcvbn/zxcvbn.go", "tools/pulumi-yaml/go.mod", "tools/pulumi-yaml/go.sum", "tools/pulumi-yaml/tools.go",
    ]),
  );
  expect(files.filter((f) => f.startsWith("tools/") && !/^tools\/(pulumi-toolchain\.sh|python-env\.sh|pulumi\/[^/]+|pulumi\/(?:language-host|zxcvbn)\/[^/]+|pulumi-yaml\/[^/]+)$/.test(f))).toEqual([]);
  // The provider plugin's folder (docs/plugin.md): what the engine runs for programs of every language.
  expect(files).toEqual(expect.arrayContaining(["plugin/pulumi-resource-gpu-rental", "plugin/pulumi-resource-gpu-rental.cmd", "plugin/package.json", "plugin/index.js"]));
  // Nothing else: no sources, tests, source maps, examples or local state.
  const unexpected = files.filter((f) => !/^(dist\/.+\.(js|d\.ts)|bin\/.+|tools\/.+|plugin\/[^/]+|README\.md|LICENSE|package\.json)$/.test(f));
  expect(unexpected).toEqual([]);
  expect(files.filter((f) => f.endsWith(".map") || f.endsWith("_test.go") || f.startsWith("test/") || f.startsWith("examples/"))).toEqual([]);
  // Installable by users, with their own @pulumi/pulumi.
  expect(manifest.private).toBeUndefined();
  expect(manifest.dependencies["@pulumi/pulumi"]).toBeUndefined();
  expect(manifest.peerDependencies["@pulumi/pulumi"]).toBe(">=3.200.0 <4");
  // Nothing runs when it is installed: the build is done before it is packed (prepack), not on the user's machine.
  expect(Object.keys(manifest.scripts).filter((name) => /^(pre|post)?(install|prepare)$/.test(name))).toEqual([]);
}, 300_000);

/** `npm ci` on Node 20 warns of no package that needs another Node (EBADENGINE): every pinned package supports it. */
it("every package the lock file pins supports the Node that runs the suite", () => {
  const semver = require("semver");
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8"));
  const refused = Object.entries(lock.packages as Record<string, { engines?: { node?: string } }>)
    .filter(([, entry]) => entry.engines?.node && !semver.satisfies(process.version, entry.engines.node))
    .map(([name, entry]) => `${name} (node ${entry.engines!.node})`);
  expect(refused).toEqual([]);
});

/**
 * What a user's `npm install gpu-rental` brings runs no install script: nothing is compiled on their machine and npm
 * has nothing to ask them to review (ssh2, whose script builds an optional binding, is bundled:
 * release/bundle.ts). The packages that only the repository's own work installs are allowed or denied by name, in
 * package.json's allowScripts.
 */
it("no dependency of the package has an install script, and the repository's own are each reviewed", () => {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8"));
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const scripted = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean; dev?: boolean }>).filter(([name, entry]) => name && entry.hasInstallScript);
  expect(scripted.filter(([, entry]) => !entry.dev).map(([name]) => name)).toEqual([]);
  expect(scripted.map(([name]) => name.slice(name.lastIndexOf("node_modules/") + "node_modules/".length)).sort()).toEqual(Object.keys(manifest.allowScripts).sort());
});
