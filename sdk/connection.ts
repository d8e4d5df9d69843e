import { ConfigurationError } from "./errors";

/** Where the service is and which key to use. */
export interface Connection {
  apiUrl: string;
  apiKey: string;
}

export const ENV_API_KEY = "GPU_RENTAL_API_KEY";
export const ENV_API_URL = "GPU_RENTAL_API_URL";
/** Stack config keys read by the Pulumi provider (the key is meant to be set with `--secret`). */
export const CONFIG_API_KEY = "gpu-rental:apiKey";
export const CONFIG_API_URL = "gpu-rental:apiUrl";

let configured: Partial<Connection> = {};

/**
 * Remembers connection settings for this process: the Pulumi provider calls it from `configure` with the
 * stack config, so the key never passes through resource inputs (and never lands in state).
 */
export function configureConnection(settings: Partial<Connection>): void {
  configured = { ...configured, ...dropEmpty(settings) };
}

/** Reads the provider settings out of a Pulumi stack config (`{get(key)}`), when present. */
export function configureFromStackConfig(config: { get(key: string): string | undefined }): void {
  configureConnection({ apiKey: config.get(CONFIG_API_KEY), apiUrl: config.get(CONFIG_API_URL) });
}

/** Explicit settings win over `configureConnection`, which wins over the environment. */
export function resolveConnection(explicit: Partial<Connection> = {}): Connection {
  const env = dropEmpty({ apiKey: process.env[ENV_API_KEY], apiUrl: process.env[ENV_API_URL] });
  const merged = { ...env, ...configured, ...dropEmpty(explicit) };
  if (!merged.apiUrl) {
    throw new ConfigurationError(
      `No API URL: set stack config ${CONFIG_API_URL} or the environment variable ${ENV_API_URL} ` +
        "(for the local emulator, `gpu-rental emulator` prints it).",
    );
  }
  if (!merged.apiKey) {
    throw new ConfigurationError(
      `No API key: set it with \`pulumi config set --secret ${CONFIG_API_KEY} <key>\` or the environment variable ${ENV_API_KEY}.`,
    );
  }
  return { apiUrl: merged.apiUrl, apiKey: merged.apiKey };
}

function dropEmpty(settings: Partial<Connection>): Partial<Connection> {
  const out: Partial<Connection> = {};
  if (settings.apiKey) out.apiKey = settings.apiKey;
  if (settings.apiUrl) out.apiUrl = settings.apiUrl;
  return out;
}
