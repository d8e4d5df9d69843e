import * as fs from "node:fs";
import * as path from "node:path";
import { PLUGIN_EXECUTABLE } from "../../provider/plugin/names";
import { pulumi } from "../../cli/pulumi";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "../package/own-program";

/** The plugin folder the packed package ships, inside a program that installed it. */
export function pluginDir(program: UserProgram): string {
  const dir = path.join(program.dir, "node_modules", "gpu-rental", "plugin");
  if (!fs.existsSync(path.join(dir, PLUGIN_EXECUTABLE))) throw new Error(`the packed package has no plugin folder at ${dir}`);
  return dir;
}

/** Its executable, as `pulumi package add` and `gen-sdk` take a plugin given by path (executable after install). */
export function pluginExecutable(program: UserProgram): string {
  const file = path.join(pluginDir(program), PLUGIN_EXECUTABLE);
  fs.accessSync(file, fs.constants.X_OK);
  return file;
}

/**
 * A TypeScript program of a user's that uses the plugin as docs/plugin.md says: the packed package installed,
 * `pulumi package add <plugin executable>`, which generates the TypeScript SDK (`@gpu-rental/pulumi`) from the
 * plugin's schema and adds it to the program (recorded as `gpu-rental@<version>`), and the package's plugin
 * folder named in Pulumi.yaml (`plugins: providers:`), where the engine runs it from.
 */
export async function typescriptPluginProgram(name: string, index: string): Promise<UserProgram> {
  const files = { "Pulumi.yaml": PROJECT(name, true), "index.ts": index, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };
  const program = await UserProgram.create(name, files, TYPESCRIPT_PROGRAM.packages, TYPESCRIPT_PROGRAM.dev);
  const stack = new TestStack(`${name}-add`, {}, program.dir);
  try {
    await pulumi(stack.ws, ["package", "add", pluginExecutable(program)]);
    const plugins = `plugins:\n  providers:\n    - name: gpu-rental\n      path: ${JSON.stringify(pluginDir(program))}\n`;
    fs.appendFileSync(path.join(program.dir, "Pulumi.yaml"), plugins);
  } finally {
    fs.rmSync(stack.ws.stateDir, { recursive: true, force: true });
  }
  return program;
}
