import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The cache (~/.cache/gpu-rental) keeps one folder per content of a piece: a plugin folder per package content, a
 * language host per source, a toolchain folder per pair. Every upgrade adds one, and a clone under development one
 * per change, a plugin's weighing the most (docs/benchmarks.md). A folder's last use is its time (each use renews it); those unused for
 * two hours (longer than any run, CI's included) are removed, but never the newest few of a piece, so
 * an older checkout run now and then keeps its own.
 */
const KEEP = 3;
const UNUSED_MS = 2 * 3_600_000;

/** Renews a cached folder's time: it is in use. */
export function markUsed(folder: string): void {
  const now = new Date();
  try {
    fs.utimesSync(folder, now, now);
  } catch {
    // gone already: nothing to renew
  }
}

/** Removes the folders of `root` named `<prefix>...` unused for two hours, past the newest `keep`; their names. */
export function pruneUnused(root: string, prefix: string, options: { keep?: number; unusedMs?: number; now?: number } = {}): string[] {
  const { keep = KEEP, unusedMs = UNUSED_MS, now = Date.now() } = options;
  let names: string[];
  try {
    names = fs.readdirSync(root).filter((name) => name.startsWith(prefix) && !name.includes(".partial"));
  } catch {
    return [];
  }
  const folders = names.flatMap((name) => {
    try {
      const stat = fs.statSync(path.join(root, name));
      return stat.isDirectory() ? [{ name, used: stat.mtimeMs }] : [];
    } catch {
      return [];
    }
  });
  const stale = folders.sort((a, b) => b.used - a.used).slice(keep).filter((folder) => now - folder.used > unusedMs);
  for (const { name } of stale) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  return stale.map((folder) => folder.name);
}

/** How long a maker waits for another process making the same folder (a plugin folder's npm install: a minute). */
const MAKER_WAIT_MS = 10 * 60_000;

/**
 * Runs `make` in one process at a time for `folder` (a lock file beside it holding the maker's pid), unless `done`
 * says another process made it meanwhile: processes that need one folder at once (tests, CI jobs) make it once. A
 * lock whose process is gone is taken over.
 */
export function makeOnce<T>(folder: string, done: () => T | undefined, make: () => T): T {
  const lock = `${folder}.lock`;
  const deadline = Date.now() + MAKER_WAIT_MS;
  for (;;) {
    const made = done();
    if (made !== undefined) return made;
    if (takeLock(lock)) break;
    if (Date.now() > deadline) throw new Error(`${lock} is still held by process ${fs.readFileSync(lock, "utf8")} after ${MAKER_WAIT_MS / 60_000} minutes: remove it if that process is not making ${folder}.`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250); // a synchronous pause: callers are synchronous
  }
  try {
    return done() ?? make();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/** Takes the lock file, or a stale one (its process gone); false while a live process holds it. */
function takeLock(lock: string): boolean {
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const holder = Number(fs.readFileSync(lock, { encoding: "utf8", flag: "r" }) || NaN);
  if (Number.isInteger(holder) && alive(holder)) return false;
  fs.rmSync(lock, { force: true }); // its maker died: the next turn takes it
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
