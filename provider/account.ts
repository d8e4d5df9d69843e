import * as pulumi from "@pulumi/pulumi";
import type { AccountRef } from "../sdk/connection";

// Loaded when an account is made, not at the top: a program of the default account loads no schema (see KindRegistration).
type Connection = typeof import("../sdk/connection");
type Schemas = typeof import("../sdk/schemas");

export interface AccountArgs {
  /** The service's URL for this account. Default: the provider's (`gpu-rental:apiUrl`, or GPU_RENTAL_API_URL). */
  apiUrl?: string;
  /**
   * The stack config key holding this account's API key, set with `pulumi config set --secret <key> <value>`.
   * Default `gpu-rental:<name>ApiKey`. A key without a namespace is the project's own (`<project>:<key>`).
   */
  apiKeyConfig?: string;
  /** Or the environment variable holding it (for CI), instead of stack config. */
  apiKeyEnv?: string;
}

/**
 * An account of the service that resources are created in, for a program that manages more than one (a team's
 * and a personal one, say). Pass it in a resource's options: `new Instance("x", {...}, { account: team })`.
 * Resources without one use the provider's default account (`gpu-rental:apiKey`, or GPU_RENTAL_API_KEY).
 *
 * The account names where its key is found, never the key: the provider reads the key from stack config or the
 * environment when it runs, so no key is ever written to state. Moving a resource to another account (another
 * name or URL) replaces it; changing only where the key is read from does not.
 */
export class Account {
  /** What resources record of the account in their inputs. */
  readonly ref: AccountRef;

  constructor(
    readonly name: string,
    args: AccountArgs = {},
  ) {
    const apiKeyConfig = args.apiKeyConfig && !args.apiKeyConfig.includes(":") ? `${pulumi.getProject()}:${args.apiKeyConfig}` : args.apiKeyConfig;
    const { AccountRef }: Connection = require("../sdk/connection");
    const { describeIssues }: Schemas = require("../sdk/schemas");
    const parsed = AccountRef.safeParse(JSON.parse(JSON.stringify({ name, ...args, apiKeyConfig })));
    if (!parsed.success) throw new Error(`Account ${JSON.stringify(name)}: ${describeIssues(parsed.error)}`);
    this.ref = parsed.data;
    requireKey(this.ref);
  }
}

/** Fails the program at once, naming the fix, when the account's key is missing or stored in plaintext. */
function requireKey(account: AccountRef): void {
  if (account.apiKeyEnv) {
    if (!process.env[account.apiKeyEnv]) throw new Error(`Account ${account.name}: the environment variable ${account.apiKeyEnv} (its API key) is not set.`);
    return;
  }
  const { apiKeyConfigOf }: Connection = require("../sdk/connection");
  const key = apiKeyConfigOf(account);
  const [namespace, name] = key.split(":");
  const set = `pulumi config set --secret ${key} <api key>`;
  if (new pulumi.Config(namespace).getSecret(name) === undefined) throw new Error(`Account ${account.name}: no API key in stack config ${key}. Set it with \`${set}\`.`);
  const isSecret = (pulumi.runtime as { isConfigSecret?: (k: string) => boolean }).isConfigSecret;
  if (isSecret && !isSecret(key)) throw new Error(`Account ${account.name}: stack config ${key} holds an API key in plaintext. Store it encrypted: \`${set}\`.`);
}
