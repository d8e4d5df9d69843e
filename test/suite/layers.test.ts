import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT, scratchFolders } from "../helpers/paths";

const run = promisify(execFile);
const LAYERS = path.join(REPO_ROOT, "tools", "layers.js");

/** The lint's check of the layers and circles (tools/layers.js, the rules of .dependency-cruiser.cjs) on a tree. */
async function checkLayers(tree: string): Promise<{ code: number; report: string }> {
  const result = await run(process.execPath, [LAYERS, tree]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  return { code: result.code, report: result.stdout };
}

/** A tree laid out as the repository, of `files` (path: text). */
function treeOf(dir: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe("the layers and circles the lint checks (.dependency-cruiser.cjs)", () => {
  const scratch = scratchFolders("layers");

  it("fails on an import against the layers and on a circle of type imports, naming each", async () => {
    const tree = treeOf(scratch(), {
      "sdk/client.ts": 'import { run } from "../cli/run";\nexport const client = run;\n',
      "cli/run.ts": "export const run = 1;\n",
      "provider/kind.ts": 'import { machine } from "../emulator/machine";\nexport const kind = machine;\n',
      "emulator/machine.ts": 'import { client } from "../sdk/client";\nexport const machine = client;\n',
      "emulator/domain/a.ts": 'import type { B } from "./b";\nexport interface A { b?: B }\n',
      "emulator/domain/b.ts": 'import type { A } from "./a";\nexport interface B { a?: A }\n',
      "release/build.ts": 'import { run } from "../cli/run";\nexport const build = run;\n',
      "cli/release.ts": 'import { build } from "../release/build";\nexport const released = build;\n',
    });
    const { code, report } = await checkLayers(tree);
    expect(code).toBe(1);
    expect(report).toMatch(/error sdk-layer: sdk\/client\.ts → cli\/run\.ts/);
    expect(report).toMatch(/error provider-layer: provider\/kind\.ts → emulator\/machine\.ts/);
    expect(report).toMatch(/error cli-layer: cli\/release\.ts → release\/build\.ts/);
    expect(report).toMatch(/error no-circular: emulator\/domain\/a\.ts →\s+emulator\/domain\/b\.ts →\s+emulator\/domain\/a\.ts/);
    // The emulator on the SDK, and release/ on the CLI, are as the layers have them.
    expect(report).not.toMatch(/emulator-layer|release\/build\.ts →/);
  }, 60_000);

  it("passes on the repository's tree", async () => {
    expect(await checkLayers(REPO_ROOT)).toEqual({ code: 0, report: "" });
  }, 60_000);
});
