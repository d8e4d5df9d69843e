import * as fs from "node:fs";
import * as path from "node:path";
import { madeWhole } from "../../sdk/made-whole";
import { scratchFolders } from "../helpers/paths";

/** The entries of `dir`, sorted. */
const entries = (dir: string) => fs.readdirSync(dir).sort();

describe("madeWhole: a folder made beside its place, then renamed into place", () => {
  const scratch = scratchFolders("made-whole");

  it("fills a stage beside the folder, which is renamed into place and nothing else is left", () => {
    const dir = scratch();
    const folder = path.join(dir, "piece", "v1");
    const seen: string[] = [];
    const made = madeWhole(folder, (stage) => {
      seen.push(stage);
      expect(fs.existsSync(folder)).toBe(false);
      fs.writeFileSync(path.join(stage, "file"), "text");
    });
    expect(made).toBe(folder);
    expect(path.dirname(seen[0])).toBe(path.dirname(folder));
    expect(path.basename(seen[0])).toMatch(/^v1\.partial-/);
    expect(fs.readFileSync(path.join(folder, "file"), "utf8")).toBe("text");
    expect(entries(path.dirname(folder))).toEqual(["v1"]);
  });

  it("leaves nothing when the fill fails, sync or async", async () => {
    const dir = scratch();
    expect(() => madeWhole(path.join(dir, "a"), () => { throw new Error("no room"); })).toThrow("no room");
    await expect(madeWhole(path.join(dir, "b"), async () => { throw new Error("no network"); })).rejects.toThrow("no network");
    expect(entries(dir)).toEqual([]);
  });

  it("answers a promise for an async fill, placed when the fill is done", async () => {
    const dir = scratch();
    const folder = path.join(dir, "async");
    const made = madeWhole(folder, async (stage) => {
      await new Promise((resolve) => setImmediate(resolve));
      fs.writeFileSync(path.join(stage, "file"), "later");
    });
    expect(made).toBeInstanceOf(Promise);
    expect(await made).toBe(folder);
    expect(fs.readFileSync(path.join(folder, "file"), "utf8")).toBe("later");
    expect(entries(dir)).toEqual(["async"]);
  });

  it("keeps a folder another maker put in place meanwhile, or replaces it when told", () => {
    const dir = scratch();
    const folder = path.join(dir, "shared");
    const other = (text: string) => (stage: string) => {
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, "file"), "first");
      fs.writeFileSync(path.join(stage, "file"), text);
    };
    expect(madeWhole(folder, other("second"))).toBe(folder);
    expect(fs.readFileSync(path.join(folder, "file"), "utf8")).toBe("first");
    fs.rmSync(folder, { recursive: true });
    expect(madeWhole(folder, other("second"), { replace: true })).toBe(folder);
    expect(fs.readFileSync(path.join(folder, "file"), "utf8")).toBe("second");
    expect(entries(dir)).toEqual(["shared"]);
  });
});
