// What a clone's build and lint keep between runs (dist/ with tsc's build info, the lint's caches), kept for the
// machine's other clones too, in ~/.cache/gpu-rental/clone-cache (or under GPU_RENTAL_CACHE). A clone that has none
// yet starts from the last state any clone kept: tsc's incremental build and the lint then redo only what differs
// (they compare files' contents, not times), as they would in an old clone after checking out the new commit.
// Paths of the clone inside a kept file stand as ROOT there, so any folder can take it.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const base = process.env.GPU_RENTAL_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "gpu-rental");
const kept = (name) => path.join(base, "clone-cache", name);
const ROOT = "<gpu-rental clone>";

/**
 * Copies `from` to `to`, each text file's `find` replaced with `put`: made whole, then renamed into place, as
 * sdk/made-whole.ts makes folders (this file runs before the build that compiles that one, so it says the same in
 * its own words).
 */
function copyReplacing(from, to, find, put) {
  const partial = `${to}.partial-${process.pid}`;
  try {
    fs.cpSync(from, partial, { recursive: true });
    for (const entry of fs.readdirSync(partial, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath ?? entry.path, entry.name);
      if (!entry.isFile() || !/\.(json|tsbuildinfo)$/.test(entry.name)) continue;
      const text = fs.readFileSync(file, "utf8");
      if (text.includes(find)) fs.writeFileSync(file, text.split(find).join(put));
    }
    fs.rmSync(to, { recursive: true, force: true });
    fs.renameSync(partial, to);
  } finally {
    fs.rmSync(partial, { recursive: true, force: true }); // left only when another process renamed first
  }
}

/** Before a build or lint: the folder from the machine's kept copy, when the clone has none. */
function seed(name, dir, root) {
  if (fs.existsSync(dir) || !fs.existsSync(kept(name))) return;
  try {
    copyReplacing(kept(name), dir, ROOT + path.sep, root + path.sep);
  } catch {
    fs.rmSync(dir, { recursive: true, force: true }); // started from nothing, as without a kept copy
  }
}

/** The time of the newest file in `dir` (0 for none). */
function newest(dir) {
  let time = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) time = Math.max(time, fs.statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return time;
}

/**
 * After one: the folder kept for the other clones, unless nothing in it changed since it was kept (a build or lint
 * with nothing to do writes nothing). A failure to keep it costs the other clones time, nothing else.
 */
function keep(name, dir, root) {
  try {
    if (fs.existsSync(kept(name)) && newest(dir) <= fs.statSync(kept(name)).mtimeMs) return;
    fs.mkdirSync(path.dirname(kept(name)), { recursive: true });
    copyReplacing(dir, kept(name), root + path.sep, ROOT + path.sep);
  } catch {
    // a full or read-only cache: the next fresh clone starts from nothing
  }
}

module.exports = { seed, keep };
