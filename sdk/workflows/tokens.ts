import { randomBytes } from "node:crypto";
import { ConfigurationError } from "../errors";
import { volumeNameOf } from "../schemas";
import type { ApiKey, Instance, Volume } from "../schemas";

/**
 * Creation tokens: each creation attempt of a thing that costs or grants something carries a token of its own,
 * which the service keeps with the thing, so an attempt whose outcome is unknown is resolved by looking for its
 * token, and concurrent creations can never mistake each other's objects for their own.
 *
 * - Instances carry it in their environment (`GPU_RENTAL_TOKEN`), not in their label: the label is the user's,
 *   and can be changed in place at any time; the environment is fixed at creation and listed with the instance.
 * - Network volumes and API keys carry it at the end of their name (`datasets-gr-k3j5x9a2m1`), the only field
 *   of theirs the service keeps as given, as Pulumi auto-names resources with a random suffix.
 *
 * A token is `<prefix>-<10 base32 characters>`; `sweep` finds what crashed runs left by the prefix.
 */
export const TOKEN_ENV = "GPU_RENTAL_TOKEN";
export const DEFAULT_TOKEN_PREFIX = "gr";
const TOKEN_BODY = /[a-z2-7]{10}/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** A token for one creation attempt. */
export function newToken(prefix = DEFAULT_TOKEN_PREFIX): string {
  checkPrefix(prefix);
  const body = [...randomBytes(10)].map((b) => ALPHABET[b & 31]).join("");
  return `${prefix}-${body}`;
}

/** A prefix is lowercase letters and digits: tokens stay unambiguous at the end of a name. */
export function checkPrefix(prefix: string): void {
  if (!/^[a-z0-9]{1,20}$/.test(prefix)) throw new ConfigurationError(`A token prefix is 1 to 20 lowercase letters or digits, got ${JSON.stringify(prefix)}.`);
}

/** The name a volume or key is created with: the user's name (if any) with the token after it. */
export function nameWithToken(name: string | undefined | null, token: string): string {
  return name ? `${name}-${token}` : token;
}

/** The token at the end of a name, or undefined. */
export function tokenOfName(name: string | null | undefined): string | undefined {
  const match = new RegExp(`(?:^|-)([a-z0-9]{1,20}-${TOKEN_BODY.source})$`).exec(name ?? "");
  return match?.[1];
}

/** A name without the creation token it carries (the name the user gave). */
export function nameWithoutToken(name: string | null | undefined): string | null | undefined {
  const token = tokenOfName(name);
  return token ? name!.slice(0, -(token.length + 1)) || name : name;
}

/** The token in an instance's environment, or undefined. */
export function tokenOfInstance(instance: Instance): string | undefined {
  return instance.extra_env?.find(([name]) => name === TOKEN_ENV)?.[1];
}

export const tokenOfVolume = (volume: Volume) => tokenOfName(volumeNameOf(volume));
export const tokenOfApiKey = (key: ApiKey) => tokenOfName(key.name);

/** Whether a token was made with `prefix`. */
export function hasPrefix(token: string | undefined, prefix: string): boolean {
  return !!token && token.startsWith(`${prefix}-`) && TOKEN_BODY.test(token.slice(prefix.length + 1));
}
