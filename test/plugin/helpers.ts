import * as fs from "node:fs";
import * as path from "node:path";
import { pulumi } from "../../cli/pulumi";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT, PULUMI_TEMPLATE_TSCONFIG } from "../package/own-program";

/** The plugin folder the packed package ships, inside a program that installed it. */
export function pluginDir(program: UserProgram): string {
  const dir = path.join(program.dir, "node_modules", "gpu-rental", "plugin");
  if (!fs.existsSync(path.join(dir, "PulumiPlugin.yaml"))) throw new Error(`the packed package has no plugin folder at ${dir}`);
  return dir;
}

/**
 * A TypeScript program of a user's that uses the plugin as Pulumi documents it: the packed package installed,
 * then `pulumi package add <plugin folder>`, which generates the TypeScript SDK (`@gpu-rental/pulumi`) from the
 * plugin's schema and adds it to the program.
 */
export async function typescriptPluginProgram(name: string, index: string): Promise<UserProgram> {
  const files = { "Pulumi.yaml": PROJECT(name, true), "index.ts": index, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };
  const program = await UserProgram.create(name, files, ["gpu-rental", "@pulumi/pulumi@3.248.0", "typescript@~5.9.3", "@types/node@^20"]);
  const stack = new TestStack(`${name}-add`, {}, program.dir);
  try {
    await pulumi(stack.ws, ["package", "add", pluginDir(program)]);
  } finally {
    fs.rmSync(stack.ws.stateDir, { recursive: true, force: true });
  }
  return program;
}
