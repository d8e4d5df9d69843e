import * as path from "node:path";
import { installPlugin } from "./plugin-install";
import { pulumi, pulumiEnv, PulumiWorkspace } from "./pulumi";
import { makeVirtualEnv, ProjectRuntime } from "./python-env";

/**
 * What a Python, Go or YAML program needs in a fresh Pulumi home before its first `up`, as docs/python.md,
 * docs/go.md and docs/yaml.md tell a user to do once: the gpu-rental provider plugin (`gpu-rental plugin install`),
 * and for Python and Go the SDK generated from the plugin (`pulumi install`, which runs `pulumi package add` for the
 * packages its Pulumi.yaml lists, then pip for requirements.txt in the program's virtual environment, or `go mod
 * tidy`). TypeScript programs need neither: they use the dynamic providers from node_modules.
 */
export async function installProgram(ws: PulumiWorkspace, runtime: ProjectRuntime, log: (line: string) => void): Promise<void> {
  if (runtime.name === "nodejs") return;
  const env = pulumiEnv(ws);
  // Linked, not copied: the workspace's Pulumi home is gone when the test ends, the cached plugin folder is not.
  installPlugin({ pulumi: path.join(ws.toolchain.bin, "pulumi"), env, log, link: true });
  if (runtime.name === "yaml") return;
  const venv = makeVirtualEnv(ws.projectDir, runtime);
  if (venv) log(`made ${venv}, with pulumi from the cached Python environment`);
  // Its output (pip's or go's, line by line) is kept for the error when it fails.
  await pulumi(ws, ["install"]);
  log(`pulumi install: the SDK generated from the plugin and the ${runtime.name === "go" ? "modules downloaded (go mod tidy)" : "requirements installed"}`);
}
