import * as fs from "node:fs";
import * as path from "node:path";
import { DocMachine, pageScript, portIsFree, scriptOfPage } from "../languages/doc-program";

/**
 * The README's "Use it in your own program", followed as printed on a user's machine where no `pulumi` is
 * installed: from npm install (the packed package served as gpu-rental) to destroy, `gpu-rental test` included.
 * Blocks marked as not run by the tests (the real service) are left out.
 */
it("the README's \"Use it in your own program\" works, followed literally, from npm install to destroy", async () => {
  const page = pageScript("README.md", ["Use it in your own program"]);
  const script = scriptOfPage(page);
  expect(script).toMatch(/npm install --save-exact gpu-rental @pulumi\/pulumi@3\.248\.0/);
  expect(script).toMatch(/eval "\$\(npx gpu-rental toolchain --env\)"/);
  expect(script).toMatch(/npx gpu-rental test/);
  expect(await portIsFree(8765)).toBe(true);
  const machine = await DocMachine.start("readme");
  try {
    const output = await machine.followPage(page);
    // Node 20: no package of the install needs another Node; the package runs no script on install.
    expect(output).not.toMatch(/EBADENGINE/);
    expect(output).not.toMatch(/gpu-rental@[\d.]+ \((pre|post)?(install|prepare)/);
    expect(output).toMatch(/\+ 2 created/);
    expect(output).toMatch(/~ 1 updated/);
    expect(output).toMatch(/- 2 deleted/);
    expect(output).toMatch(/PASS nothing left running/);
    expect(output).toMatch(/gpu-rental test: (\d+) of \1 steps passed/);
    const dir = path.join(machine.home, "gpu-infra");
    expect(fs.readFileSync(path.join(dir, "gpu-rental-test.xml"), "utf8")).toMatch(/failures="0"/);
    // The versions as installed, exactly: a later npm install keeps @pulumi/pulumi on the release Node 20 runs.
    expect(JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).dependencies["@pulumi/pulumi"]).toBe("3.248.0");
    // `kill %1` stopped the emulator: nothing listens on its port any more.
    expect(await portIsFree(8765)).toBe(true);
    const state = machine.stateText("gpu-infra");
    expect(state).toMatch(/ciphertext|secure/);
    expect(state).not.toContain("local-dev-key-1");
  } finally {
    await machine.close();
  }
}, 600_000);
