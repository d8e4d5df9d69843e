// Marks the run's processes (GPU_RENTAL_TEST_RUN, the mark of `gpu-rental test`'s). Packs the package once per test run, as `npm pack` of a clone would (dist/ is built by `pretest`), so the
// tests that matter install that tarball into programs outside the repository. Its path is GPU_RENTAL_TARBALL.
// GPU_RENTAL_INSTALLS is the run's folder of work done once and shared (sharedOnce in test/helpers/user-program.ts:
// one `npm install` per kind of program, copied into each program of that kind).
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

module.exports = async function globalSetup() {
  // Every process the run starts carries it, down to the engine's plugins and the emulated machines' processes (a
  // `gpu-rental test` the tests run extends it for its own): the summary reporter checks that none outlives the run.
  process.env.GPU_RENTAL_TEST_RUN ??= `suite-${process.pid}-${Date.now()}`;
  if (!process.env.GPU_RENTAL_INSTALLS) {
    process.env.GPU_RENTAL_INSTALLS = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-installs-"));
    process.env.GPU_RENTAL_INSTALLS_OWNED = "1";
  }
  const root = path.resolve(__dirname, "..", "..");
  // Pulumi's hosts as an installed Pulumi would have them, ahead on PATH: the suite must run ours all the same.
  if (!process.env.GPU_RENTAL_DECOYS) require("./decoy-hosts").plantDecoys();
  // Built (or found built) once for the run, with every language's host (the suite runs programs in each), before
  // the workers, each of which finds it in the cache.
  const { ensureToolchain, LANGUAGES } = require(path.join(root, "dist", "cli", "toolchain.js"));
  ensureToolchain({ languages: LANGUAGES });
  if (process.env.GPU_RENTAL_TARBALL && fs.existsSync(process.env.GPU_RENTAL_TARBALL)) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-pack-"));
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const [{ filename }] = JSON.parse(out);
  process.env.GPU_RENTAL_TARBALL = path.join(dir, filename);
  process.env.GPU_RENTAL_PACK_DIR = dir;
};
