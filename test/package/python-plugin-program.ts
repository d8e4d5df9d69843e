import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pulumi } from "../../cli/pulumi";
import { makeVirtualEnv } from "../../cli/python-env";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { pluginDir, pluginExecutable } from "../plugin/helpers";
import { TYPESCRIPT_PROGRAM } from "./own-program";

/**
 * A Python program through the plugin, as docs/plugin.md has a user set it up: the packed package's plugin folder
 * named in Pulumi.yaml, the Python SDK generated from it (`pulumi package gen-sdk`) and pip-installed into the
 * program's virtual environment (with pulumi from the cached environment, as `gpu-rental test` makes it).
 * `files` are the program's own (its `__main__.py` and what it reads), beside the Pulumi.yaml made here.
 */
export async function pythonPluginProgram(name: string, files: Record<string, string>): Promise<UserProgram> {
  const project = `name: ${name}\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n`;
  const program = await UserProgram.create(name, { "Pulumi.yaml": project, ...files }, TYPESCRIPT_PROGRAM.packages);
  fs.appendFileSync(path.join(program.dir, "Pulumi.yaml"), `plugins:\n  providers:\n    - name: gpu-rental\n      path: ${JSON.stringify(pluginDir(program))}\n`);
  const sdks = path.join(program.dir, "sdks");
  const gen = new TestStack(`${name}-gen-sdk`, {}, program.dir);
  try {
    await pulumi(gen.ws, ["package", "gen-sdk", pluginExecutable(program), "--language", "python", "--out", sdks]);
  } finally {
    fs.rmSync(gen.ws.stateDir, { recursive: true, force: true });
  }
  const venv = makeVirtualEnv(program.dir, { name: "python", options: { virtualenv: "venv" } })!;
  const pip = spawnSync(path.join(venv, "bin", "python"), ["-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", path.join(sdks, "python")], { encoding: "utf8" });
  if (pip.status !== 0) throw new Error(`pip install of the generated SDK failed: ${pip.stderr}`);
  return program;
}
