import * as path from "node:path";
import { PACKAGE_ROOT } from "../../sdk/package-root";

/** The provider plugin's name: resource types are `gpu-rental:index:<Kind>`, the Pulumi plugin `resource-gpu-rental`. */
export const PLUGIN_NAME = "gpu-rental";

/**
 * The plugin's executable, as the engine looks for it in a plugin folder: a shim that runs node on the folder's
 * index.js (plugin/ of the package has one, and every folder `gpu-rental plugin install` prepares a copy), or the
 * release's executable. The engine runs it directly, not through the Node.js language host, so the plugin starts
 * sooner (docs/plugin.md, Benchmark).
 */
export const PLUGIN_EXECUTABLE = `pulumi-resource-${PLUGIN_NAME}`;

/** The package's own plugin folder: what `plugins: providers: path:` of a Pulumi.yaml can name. */
export const PACKAGE_PLUGIN_DIR = path.join(PACKAGE_ROOT, "plugin");
