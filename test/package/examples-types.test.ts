import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO_ROOT } from "../helpers/paths";

const run = promisify(execFile);

/**
 * Every TypeScript example type-checks against the package's published types (`gpu-rental/provider` resolves
 * to the built dist/ through the package's exports): tsconfig.examples.json. The engine runs the examples
 * without checking types again (examples.test.ts), so this is where a type error in one would show.
 */
it("type-checks every TypeScript example against the package's types", async () => {
  const tsc = require.resolve("typescript/bin/tsc");
  const result = await run(process.execPath, [tsc, "-p", "tsconfig.examples.json"], { cwd: REPO_ROOT, maxBuffer: 16 << 20 }).then(
    () => ({ code: 0, output: "" }),
    (error) => ({ code: error.code as number, output: `${error.stdout}${error.stderr}` }),
  );
  expect(result).toEqual({ code: 0, output: "" });
}, 300_000);
