import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The cache (~/.cache/gpu-rental) keeps one folder per content of a piece: a plugin folder per package content, a
 * language host per source, a toolchain folder per pair. Every upgrade adds one, and a clone under development one
 * per change, some 130 MB each for a plugin. A folder's last use is its time (each use renews it); those unused for
 * two hours (longer than any run: CI's bound is 90 minutes) are removed, but never the newest few of a piece, so
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
