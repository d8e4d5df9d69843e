import { createHash, randomBytes } from "node:crypto";
import { ConfigurationError } from "../errors";
import { canonicalJson, envValueOf, volumeNameOf, type ApiKey, type Instance, type Volume } from "../schemas";

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
 *
 * The Pulumi resources derive theirs instead (resourceToken): the prefix from the stack (`gr` and 8 characters of
 * a hash of its project and name), the body from the resource's URN and which of its creations it is. The next
 * `up` of a run that was cut off (a SIGKILL, a lost machine) makes the same token again and finds what the
 * cut-off run rented; `sweep --stack` finds all that a stack's resources made.
 */
export const TOKEN_ENV = "GPU_RENTAL_TOKEN";
/** What an instance of a Pulumi resource was rented for: a digest of its spec, so the next `up` can tell whether it still fits. */
export const SPEC_ENV = "GPU_RENTAL_SPEC";
/**
 * Who rented an instance of a Pulumi resource, in plain words (the token carries only a hash of them): its stack
 * (`project/stack`) and its resource (the name, and the member of a fleet), for people reading a listing or a console.
 */
export const STACK_ENV = "GPU_RENTAL_STACK";
export const RESOURCE_ENV = "GPU_RENTAL_RESOURCE";
export const DEFAULT_TOKEN_PREFIX = "gr";
const TOKEN_BODY = /[a-z2-7]{10}/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** A token for one creation attempt. */
export function newToken(prefix = DEFAULT_TOKEN_PREFIX): string {
  checkPrefix(prefix);
  return `${prefix}-${base32(randomBytes(10))}`;
}

/**
 * Which creation of which Pulumi resource: its URN, and its generation (0 for its first creation, one more at each
 * `up` that finds it in the state, so a replacement's new half never shares a token with its old half).
 */
export interface CreationIdentity {
  urn: string;
  generation: number;
}

/** A stack as its URNs name it. */
export interface StackRef {
  project: string;
  stack: string;
}

/** The stack and project of a URN (`urn:pulumi:<stack>::<project>::<type>::<name>`). */
export function stackOfUrn(urn: string): StackRef {
  const match = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn);
  if (!match) throw new ConfigurationError(`Not a resource URN: ${JSON.stringify(urn)}.`);
  return { stack: match[1], project: match[2] };
}

/** The resource's name: the last part of its URN (`urn:pulumi:stack::project::type::name`). */
export function resourceName(urn: string): string {
  return urn.split("::").pop() ?? "";
}

/** The token prefix of everything the resources of a stack create: `gr` and 8 characters of a hash of its project and name. */
export function stackTokenPrefix(ref: StackRef): string {
  return `${DEFAULT_TOKEN_PREFIX}${base32(digest(`${ref.project}\n${ref.stack}`)).slice(0, 8)}`;
}

/**
 * The token of one creation of a resource (`slot`: which of its objects, e.g. a fleet's member): the same in every
 * `up` that creates it from the same state, so the next `up` after a cut-off one finds what that one made.
 */
export function resourceToken(identity: CreationIdentity, slot = ""): string {
  const body = base32(digest(`${identity.urn}\n${identity.generation}\n${slot}`)).slice(0, 10);
  return `${stackTokenPrefix(stackOfUrn(identity.urn))}-${body}`;
}

/** The environment naming the stack and resource (`member`: of a fleet) that rent an instance: STACK_ENV, RESOURCE_ENV. */
export function ownerEnv(identity: CreationIdentity, member?: number): Record<string, string> {
  const { project, stack } = stackOfUrn(identity.urn);
  const name = resourceName(identity.urn);
  return { [STACK_ENV]: `${project}/${stack}`, [RESOURCE_ENV]: member === undefined ? name : `${name} (member ${member})` };
}

/** 8 characters of a hash of a spec: an instance carries the spec it was rented for (`GPU_RENTAL_SPEC`). */
export function specDigest(spec: unknown): string {
  return base32(digest(canonicalJson(spec))).slice(0, 8);
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function base32(bytes: Uint8Array): string {
  return [...bytes].map((b) => ALPHABET[b & 31]).join("");
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
  return envOf(instance, TOKEN_ENV);
}

/** The spec digest in an instance's environment (instances of Pulumi resources), or undefined. */
export function specOfInstance(instance: Instance): string | undefined {
  return envOf(instance, SPEC_ENV);
}

function envOf(instance: Instance, name: string): string | undefined {
  return envValueOf(instance.extra_env, name);
}

export const tokenOfVolume = (volume: Volume) => tokenOfName(volumeNameOf(volume));
export const tokenOfApiKey = (key: ApiKey) => tokenOfName(key.name);

/** What a user runs to destroy what carries `token` (the account from GPU_RENTAL_API_URL / GPU_RENTAL_API_KEY): for messages that leave something to clean. */
export function sweepCommand(token: string): string {
  return `gpu-rental sweep --token ${token}`;
}

/** Whether a token was made with `prefix`. */
export function hasPrefix(token: string | undefined, prefix: string): boolean {
  return !!token && token.startsWith(`${prefix}-`) && TOKEN_BODY.test(token.slice(prefix.length + 1));
}
