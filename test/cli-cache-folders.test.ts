import { execFile, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { markUsed, pruneUnused } from "../cli/cache-folders";
import { REPO_ROOT, scratchFolders } from "./helpers/paths";

const HOUR = 3_600_000;

describe("the cache keeps the pieces in use (cli/cache-folders.ts)", () => {
  const scratch = scratchFolders("cache-folders");

  /** Folders named `names`, each last used `hoursAgo` before `now`. */
  function folders(root: string, now: number, used: Record<string, number>): void {
    for (const [name, hoursAgo] of Object.entries(used)) {
      fs.mkdirSync(path.join(root, name));
      const at = new Date(now - hoursAgo * HOUR);
      fs.utimesSync(path.join(root, name), at, at);
    }
  }

  it("removes a piece's folders unused for two hours, past its newest three; nothing else", () => {
    const root = scratch();
    const now = Date.now();
    folders(root, now, {
      "plugin-gpu-rental-v0.1.0-aaaaaaaaaaaa": 100, "plugin-gpu-rental-v0.1.0-bbbbbbbbbbbb": 50, "plugin-gpu-rental-v0.1.0-cccccccccccc": 30,
      "plugin-gpu-rental-v0.1.0-dddddddddddd": 26, "plugin-gpu-rental-v0.2.0-eeeeeeeeeeee": 1.5, "plugin-gpu-rental-v0.1.0-ffffffffffff": 1,
      "plugin-gpu-rental.partial-x1": 200, "language-host-v3.248.0-111111111111": 500, "ssh": 500,
    });
    const removed = pruneUnused(root, "plugin-gpu-rental-v", { now });
    // Newest three: f, e, d; then c, b and a are past them, each unused for more than two hours.
    expect(removed.sort()).toEqual(["plugin-gpu-rental-v0.1.0-aaaaaaaaaaaa", "plugin-gpu-rental-v0.1.0-bbbbbbbbbbbb", "plugin-gpu-rental-v0.1.0-cccccccccccc"]);
    expect(fs.readdirSync(root).sort()).toEqual([
      "language-host-v3.248.0-111111111111", "plugin-gpu-rental-v0.1.0-dddddddddddd", "plugin-gpu-rental-v0.1.0-ffffffffffff",
      "plugin-gpu-rental-v0.2.0-eeeeeeeeeeee", "plugin-gpu-rental.partial-x1", "ssh",
    ]);
  });

  it("keeps a folder whose use was renewed, however old it is", () => {
    const root = scratch();
    const now = Date.now();
    folders(root, now, { "toolchain-v3-a": 1.5, "toolchain-v3-b": 1, "toolchain-v3-c": 0.5, "toolchain-v3-old": 72 });
    markUsed(path.join(root, "toolchain-v3-old"));
    expect(pruneUnused(root, "toolchain-v3-", { now: now + 1_000 })).toEqual([]);
    expect(fs.readdirSync(root)).toHaveLength(4);
    expect(pruneUnused(path.join(root, "missing"), "toolchain-v3-")).toEqual([]);
  });
});

describe("a cached folder is made by one process at a time (makeOnce)", () => {
  const scratch = scratchFolders("make-once");
  const MODULE = path.join(REPO_ROOT, "dist", "cli", "cache-folders.js");
  /** A process that makes `folder` (slowly, counting makings in `count`) unless it is made. */
  const maker = (folder: string, count: string) =>
    new Promise<string>((resolve, reject) => {
      const script = `const fs = require("fs"); const { makeOnce } = require(${JSON.stringify(MODULE)});
        const folder = ${JSON.stringify(folder)};
        const made = makeOnce(folder, () => (fs.existsSync(folder + "/done") ? folder : undefined), () => {
          fs.appendFileSync(${JSON.stringify(count)}, "x");
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
          fs.mkdirSync(folder, { recursive: true }); fs.writeFileSync(folder + "/done", "");
          return folder;
        });
        process.stdout.write(made);`;
      execFile(process.execPath, ["-e", script], (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });

  it("makes it once for processes that ask at once, and each gets it", async () => {
    const root = scratch();
    const folder = path.join(root, "piece-1");
    const count = path.join(root, "count");
    expect(await Promise.all([1, 2, 3, 4].map(() => maker(folder, count)))).toEqual([folder, folder, folder, folder]);
    expect(fs.readFileSync(count, "utf8")).toBe("x");
    expect(fs.existsSync(`${folder}.lock`)).toBe(false);
  });

  it("takes over the lock of a maker that died", async () => {
    const root = scratch();
    const folder = path.join(root, "piece-2");
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    fs.writeFileSync(`${folder}.lock`, String(dead));
    expect(await maker(folder, path.join(root, "count"))).toBe(folder);
    expect(fs.readFileSync(path.join(root, "count"), "utf8")).toBe("x");
  });
});
