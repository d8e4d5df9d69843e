import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { ProjectRuntime, runtimeOf } from "./python-env";

/** The runtime a project's Pulumi.yaml declares (`runtime: python`, or a mapping of `name` and `options`). */
export function projectRuntime(programDir: string): ProjectRuntime {
  const file = path.join(programDir, "Pulumi.yaml");
  const project = parse(fs.readFileSync(file, "utf8")) as { runtime?: string | { name: string; options?: object } } | null;
  if (!project?.runtime) throw new Error(`${file} declares no runtime`);
  return runtimeOf({ runtime: project.runtime });
}
