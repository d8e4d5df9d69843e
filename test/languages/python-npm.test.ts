import * as fs from "node:fs";
import * as path from "node:path";
import { ed25519KeyPair } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { VERSION } from "../helpers/release-mirror";
import { DocMachine, pageScript, scriptOfPage } from "./doc-program";

/**
 * docs/python.md's other way, from the npm package, followed as printed on a user's machine with Node.js and no
 * `pulumi`: the package from the local registry, `pulumi` put on PATH by `eval "$(npx gpu-rental toolchain --env)"`,
 * the plugin by `npx gpu-rental plugin install`, the package's `gpu-rental` on PATH, the SDK by `pulumi package add`.
 * The rest of the page is the same for both ways and python.test.ts follows it the pip way; here the page's
 * program, with the SDK the npm way made, is previewed against an emulator: the plugin installed from the package
 * runs its checks (offer searches of both accounts) for all nine resources.
 */
describe("docs/python.md's install from the npm package", () => {
  let machine: DocMachine;
  let emu: TestEmulator;
  const dir = "gpu-python";

  beforeAll(async () => {
    [machine, emu] = await Promise.all([DocMachine.start("python-npm"), emulator()]);
  });
  afterAll(async () => {
    await machine?.close();
    await emu?.close();
  });

  it("installs the plugin and generates the SDK as printed, with no warning of npm's, and the program previews its nine resources", async () => {
    const page = pageScript("docs/python.md", ["The project", "Install from the npm package"]);
    expect(scriptOfPage(page)).toMatch(/pulumi package add gpu-rental/);
    const output = await machine.followPage(page);
    expect(output).not.toMatch(/EBADENGINE/);
    expect(output).not.toMatch(/gpu-rental@[\d.]+ \((pre|post)?(install|prepare)/);
    expect(output).not.toMatch(/SetuptoolsDeprecationWarning|setuptools.*warn/i);
    expect(await machine.ok("cat requirements.txt", dir)).toMatch(/^sdks\/gpu-rental$/m);
    // The plugin in the Pulumi home is a folder of its own, of hard links to the prepared folder's files: nothing
    // of it is a link to a folder that may go (the project's, the cache's).
    const installed = path.join(machine.home, ".pulumi", "plugins", `resource-gpu-rental-v${VERSION}`);
    expect(fs.lstatSync(installed).isDirectory()).toBe(true);
    for (const file of ["index.js", "pulumi-resource-gpu-rental", "node_modules/gpu-rental/package.json"]) {
      expect([file, fs.lstatSync(path.join(installed, file)).isFile(), fs.statSync(path.join(installed, file)).nlink > 1]).toEqual([file, true, true]);
    }

    const team = emu.account("python-npm-team@gpu-rental.test");
    const preview = await machine.ok(
      [
        "pulumi stack init npm",
        `pulumi config set-all --plaintext gpu-rental:apiUrl=${emu.url} --secret gpu-rental:apiKey=${emu.apiKey} --secret teamApiKey=${team.key}`,
        `pulumi config set ssh_public_key '${ed25519KeyPair("npm-way").public}'`,
        "pulumi preview",
      ].join(" && "),
      dir,
    );
    expect(preview).toMatch(/\+ 9 to create/);
    expect(preview).not.toMatch(/warning|error/i);
  }, 600_000);
});
