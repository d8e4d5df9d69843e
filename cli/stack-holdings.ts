import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { StackHoldings, stackHoldings } from "../sdk";

/**
 * What the stack `stack` (`name`, or `org/project/name`) of the Pulumi project in `projectDir` holds: its state,
 * read with `pulumi stack export` (the `pulumi` on PATH, with the backend and login of the environment, as every
 * pulumi command of the job has them). A stack whose state holds nothing yet is named by its project's name.
 */
export function readStackHoldings(stack: string, projectDir = process.cwd()): StackHoldings {
  const result = spawnSync("pulumi", ["stack", "export", "--stack", stack, "--non-interactive"], { cwd: projectDir, encoding: "utf8", maxBuffer: 256 << 20 });
  if (result.error) throw new Error(`Reading stack ${stack}'s state needs the Pulumi CLI on PATH: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`pulumi stack export --stack ${stack} failed (exit ${result.status}): ${result.stderr.trim()}`);
  return stackHoldings(result.stdout, { project: projectName(projectDir), stack: stack.split("/").pop()! });
}

function projectName(projectDir: string): string {
  const file = path.join(projectDir, "Pulumi.yaml");
  const name = fs.existsSync(file) ? (parse(fs.readFileSync(file, "utf8")) as { name?: string } | null)?.name : undefined;
  if (!name) throw new Error(`${file} names no project: run gpu-rental in the folder of the stack's Pulumi project.`);
  return name;
}
