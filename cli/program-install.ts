import * as path from "node:path";
import { installPlugin } from "./plugin-install";
import { pulumi, pulumiEnv, PulumiWorkspace } from "./pulumi";
import { makeVirtualEnv, ProjectRuntime } from "./python-env";

/**
 * What a Python or YAML program needs in a fresh Pulumi home before its first `up`, as docs/python.md and
 * docs/yaml.md tell a user to do once: the gpu-rental provider plugin (`gpu-rental plugin install`), and for Python
 * its virtual environment with the SDK generated from the plugin (`pulumi install`, which runs `pulumi package add`
 * for the packages its Pulumi.yaml lists and pip for its requirements.txt). TypeScript programs need neither: they
 * use the dynamic providers from node_modules.
 */
export async function installProgram(ws: PulumiWorkspace, runtime: ProjectRuntime, log: (line: string) => void): Promise<void> {
  if (runtime.name === "nodejs") return;
  const env = pulumiEnv(ws);
  // Linked, not copied: the workspace's Pulumi home is gone when the test ends, the cached plugin folder is not.
  installPlugin({ pulumi: path.join(ws.toolchain.bin, "pulumi"), env, log, link: true });
  if (runtime.name !== "python") return;
  const venv = makeVirtualEnv(ws.projectDir, runtime);
  if (venv) log(`made ${venv}, with pulumi from the cached Python environment`);
  // Its output (pip's, line by line) is kept for the error when it fails.
  await pulumi(ws, ["install"]);
  log("pulumi install: the SDK generated from the plugin and the requirements installed");
}
