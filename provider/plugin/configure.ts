import { CONFIG_API_KEY, ConfigSource } from "../../sdk/connection";
import { ConfigurationError } from "../../sdk/errors";
import { PLUGIN_DOWNLOAD_URL } from "../schema/schema";
import { isSecret, revealed } from "./secrets";

/**
 * The provider's settings, from the default provider's stack config (`gpu-rental:apiUrl`, `gpu-rental:apiKey`,
 * `gpu-rental:maxHourlySpend`) or an explicit provider's inputs; what is not set comes from GPU_RENTAL_API_URL /
 * GPU_RENTAL_API_KEY when a resource needs it. The provider's context is made from them (provider/lifecycle/context.ts).
 *
 * A key that reaches the provider in plaintext would be written to state and config files in the clear: it is
 * refused, naming the command that stores it encrypted.
 */
export function configureProvider(args: Record<string, unknown>, pluginVersion: string): ConfigSource {
  refuseOtherVersion(args.version, pluginVersion);
  if (args.apiKey !== undefined && args.apiKey !== null && !isSecret(args.apiKey)) {
    throw new ConfigurationError(
      `The gpu-rental API key is given in plaintext, and would be stored so. Store it encrypted: \`pulumi config set --secret ${CONFIG_API_KEY} <api key>\` ` +
        "(for an explicit provider, pass the key as a secret, e.g. `pulumi.secret(...)` or `config.require_secret(...)`).",
    );
  }
  const settings = revealed(args);
  // The settings are stack config `gpu-rental:<name>` (or an explicit provider's inputs), maxHourlySpend among them.
  return { get: (key) => (key.startsWith(NAMESPACE) ? textOf(settings[key.slice(NAMESPACE.length)]) : undefined) };
}

const NAMESPACE = "gpu-rental:";

function textOf(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The engine gives a provider the version its program's SDK asked for (`version`, beside the settings); the
 * plugin it runs is that version unless something pinned another in its place (a `plugins: providers: path:` in
 * Pulumi.yaml, a pulumi-resource-gpu-rental on PATH, an archive published under the wrong version). An SDK and a
 * plugin of two releases may disagree on the resources' inputs: refused, naming both versions and the way out.
 */
function refuseOtherVersion(asked: unknown, pluginVersion: string): void {
  if (typeof asked !== "string" || asked === "" || asked.replace(/^v/, "") === pluginVersion) return;
  throw new ConfigurationError(
    `The gpu-rental plugin running is v${pluginVersion}, but the program's gpu-rental SDK asks for v${asked}: use the plugin and SDK of one release. ` +
      `Install the plugin of the SDK's version (\`pulumi plugin install resource gpu-rental v${asked} --reinstall --server ${PLUGIN_DOWNLOAD_URL}\`, or the server your SDK was released for), ` +
      `or the SDK of the plugin's (e.g. \`pip install pulumi_gpu_rental==${pluginVersion}\`); and check that no \`plugins: providers: path:\` in Pulumi.yaml, nor a pulumi-resource-gpu-rental on PATH, puts another plugin in its place.`,
  );
}
