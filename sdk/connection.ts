import { z } from "zod";
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
/** Stack config: $/hour the account's instances may cost together; the providers refuse a rental that would cross it. */
export const CONFIG_MAX_HOURLY_SPEND = "gpu-rental:maxHourlySpend";

/**
 * Which account a resource uses, as its inputs record it: a name and where the account's key is to be found
 * (a stack config key or an environment variable), never the key itself, so no key is ever written to state.
 */
export const AccountRef = z
  .object({
    name: z.string().regex(/^[A-Za-z][\w-]*$/, "an account name is a letter followed by letters, digits, '_' or '-'"),
    /** The service's URL for this account; default the provider's (`gpu-rental:apiUrl`, GPU_RENTAL_API_URL). */
    apiUrl: z.string().url().optional(),
    /** The stack config key holding the account's key (a secret); default `gpu-rental:<name>ApiKey`. */
    apiKeyConfig: z.string().regex(/^[^:]+:[^:]+$/, "a config key is namespace:name").optional(),
    /** Or the environment variable holding it (read by the provider, e.g. in CI). */
    apiKeyEnv: z.string().regex(/^[A-Za-z_]\w*$/).optional(),
  })
  .strict()
  .refine((a) => a.apiKeyConfig === undefined || a.apiKeyEnv === undefined, { message: "give apiKeyConfig or apiKeyEnv, not both" });
export type AccountRef = z.infer<typeof AccountRef>;

/** The stack config key an account's key is read from, unless it names an environment variable instead. */
export function apiKeyConfigOf(account: AccountRef): string {
  return account.apiKeyConfig ?? `gpu-rental:${account.name}ApiKey`;
}

/** Stack config, secrets decrypted (what a Pulumi provider's `configure` hands over), or any other source of it. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

/** The stack's `gpu-rental:maxHourlySpend` in `config`, if set (a ConfigurationError if it is not a positive number). */
export function spendCapOf(config: ConfigSource): number | undefined {
  const text = config.get(CONFIG_MAX_HOURLY_SPEND);
  if (text === undefined || text === "") return undefined;
  const cap = Number(text);
  if (!(cap > 0)) throw new ConfigurationError(`${CONFIG_MAX_HOURLY_SPEND} is ${JSON.stringify(text)}: give a positive number of $/hour, e.g. \`pulumi config set ${CONFIG_MAX_HOURLY_SPEND} 5\`.`);
  return cap;
}

/**
 * The connection of an account (the default one when none is named). For the default account, explicit settings
 * win over the stack config's (`gpu-rental:apiUrl`, `gpu-rental:apiKey`), which win over the environment. A named
 * account's key is read from the stack config key or the environment variable it names.
 */
export function resolveConnection(explicit: Partial<Connection> = {}, account?: AccountRef, config?: ConfigSource): Connection {
  const env = dropEmpty({ apiKey: process.env[ENV_API_KEY], apiUrl: process.env[ENV_API_URL] });
  const defaults = { ...env, ...dropEmpty({ apiKey: config?.get(CONFIG_API_KEY), apiUrl: config?.get(CONFIG_API_URL) }) };
  const merged = account ? { apiUrl: account.apiUrl ?? defaults.apiUrl, apiKey: accountKey(account, config) } : { ...defaults, ...dropEmpty(explicit) };
  if (!merged.apiUrl) {
    throw new ConfigurationError(
      `No API URL${account ? ` for account ${account.name}` : ""}: set stack config ${CONFIG_API_URL} or the environment variable ${ENV_API_URL} ` +
        "(for the local emulator, `gpu-rental emulator` prints it).",
    );
  }
  if (!merged.apiKey) throw new ConfigurationError(missingKeyMessage(account));
  return { apiUrl: merged.apiUrl, apiKey: merged.apiKey };
}

function accountKey(account: AccountRef, config: ConfigSource | undefined): string | undefined {
  if (account.apiKeyEnv) return process.env[account.apiKeyEnv] || undefined;
  return config?.get(apiKeyConfigOf(account)) || undefined;
}

function missingKeyMessage(account?: AccountRef): string {
  if (!account) {
    return `No API key: set it with \`pulumi config set --secret ${CONFIG_API_KEY} <key>\` or the environment variable ${ENV_API_KEY}.`;
  }
  if (account.apiKeyEnv) return `No API key for account ${account.name}: the environment variable ${account.apiKeyEnv} is not set.`;
  return `No API key for account ${account.name}: set it with \`pulumi config set --secret ${apiKeyConfigOf(account)} <key>\`.`;
}

function dropEmpty(settings: Partial<Connection>): Partial<Connection> {
  const out: Partial<Connection> = {};
  if (settings.apiKey) out.apiKey = settings.apiKey;
  if (settings.apiUrl) out.apiUrl = settings.apiUrl;
  return out;
}
