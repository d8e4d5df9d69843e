/** A stack output as `gpu-rental test` checks it and `deploy` prints it: its value, and whether it is secret. */
export interface StackOutput {
  value: unknown;
  secret: boolean;
  /** A secret whose value was not decrypted (an export without --show-secrets): `value` is undefined. */
  sealed?: true;
}

export type StackOutputs = Record<string, StackOutput>;

/** What one `pulumi stack export` tells about a stack (its secrets decrypted with --show-secrets, else sealed). */
export interface StackState {
  outputs: StackOutputs;
  /** Every resource of the state, the stack and providers among them (what parallelism counts). */
  resourceCount: number;
}

/** The state of a stack that has never been updated: nothing in it, nothing to ask the CLI. */
export const FRESH_STACK: StackState = { outputs: {}, resourceCount: 0 };

/**
 * How a checkpoint marks a secret (`sig.Secret` in Pulumi's resource package): an object with this key set to
 * this value, the value itself JSON-encoded in `plaintext` (an export with --show-secrets) or `ciphertext`.
 */
const SIGNATURE_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270";

/** The state in the JSON of `pulumi stack export`, with or without --show-secrets (an untyped deployment of any version). */
export function stackStateOf(exported: string): StackState {
  const resources: { type?: string; outputs?: Record<string, unknown> }[] = JSON.parse(exported)?.deployment?.resources ?? [];
  const root = resources.find((resource) => resource.type === "pulumi:pulumi:Stack");
  const outputs = Object.fromEntries(Object.entries(root?.outputs ?? {}).map(([name, value]) => [name, revealed(value)]));
  return { outputs, resourceCount: resources.length };
}

/**
 * A checkpoint value with its secrets decoded, and whether it held one anywhere: an output with a secret inside
 * is shown masked as a whole (`[secret]`), not with only its plain parts in the clear.
 */
function revealed(value: unknown): StackOutput {
  if (Array.isArray(value)) return combined(value.map(revealed), (items) => items.map((item) => item.value));
  if (!value || typeof value !== "object") return { value, secret: false };
  const object = value as Record<string, unknown>;
  if (object[SIGNATURE_KEY] === SECRET_SIGNATURE) {
    if (typeof object.plaintext === "string") return { value: revealed(JSON.parse(object.plaintext)).value, secret: true };
    return { value: undefined, secret: true, sealed: true };
  }
  const keys = Object.keys(object);
  return combined(keys.map((key) => revealed(object[key])), (items) => Object.fromEntries(keys.map((key, i) => [key, items[i].value])));
}

/** A list's or an object's items as one output: secret when one of them is, sealed as a whole when one of them is. */
function combined(items: StackOutput[], valueOf: (items: StackOutput[]) => unknown): StackOutput {
  if (items.some((item) => item.sealed)) return { value: undefined, secret: true, sealed: true };
  return { value: valueOf(items), secret: items.some((item) => item.secret) };
}
