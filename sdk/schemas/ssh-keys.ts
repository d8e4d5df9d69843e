import { ssh2 } from "../ssh2";
import { z } from "zod";

/** `POST /api/v0/ssh/` (add a key to the account) and `POST /api/v0/instances/{id}/ssh/` (attach one to an instance). */
export const SshKeyRequest = z.object({ ssh_key: z.string().min(1) }).strict();
export type SshKeyRequest = z.infer<typeof SshKeyRequest>;

/**
 * A public key registered on the account, as the live service shows it (the vendor's description, a recorded
 * answer, and a Terraform provider tested against the service): the key line is `public_key` in the answer of an
 * addition and `key` in the vendor's listing (read either with publicKeyOf); `created_at` is epoch seconds, a
 * float (recorded), or the date-time text the vendor's description says: read it with sshKeyCreatedAt.
 */
export const SshKey = z.looseObject({
  id: z.number().int(),
  user_id: z.number().int().nullable().optional(),
  public_key: z.string().nullable().optional(),
  key: z.string().nullable().optional(),
  created_at: z.union([z.number(), z.string()]).nullable().optional(),
});
export type SshKey = z.infer<typeof SshKey>;

/** When a key was registered, seconds since 1970, whichever form the answer gives (null when it gives none that reads). */
export function sshKeyCreatedAt(key: SshKey): number | null {
  if (typeof key.created_at === "number") return key.created_at;
  const ms = typeof key.created_at === "string" ? Date.parse(key.created_at) : NaN;
  return Number.isFinite(ms) ? ms / 1000 : null;
}

/** The key line of a key record, whichever field carries it. */
export function publicKeyOf(key: SshKey): string | undefined {
  return key.public_key ?? key.key ?? undefined;
}

/** `POST /api/v0/ssh/`: `{success, key: {...}}`. */
export const SshKeyResponse = z.looseObject({ success: z.boolean().optional(), key: SshKey });
/**
 * `PUT /api/v0/ssh/{id}/`: `{success, key: {...}}`, where the vendor's description says only "the updated SSH key
 * data": the key's id may be left out (the caller named it in the path).
 */
export const SshKeyUpdateResponse = z.looseObject({ success: z.boolean().optional(), key: SshKey.extend({ id: z.number().int().optional() }) });
/** `GET /api/v0/ssh/`: a bare array of keys, not an object. */
export const SshKeyListResponse = z.array(SshKey);
/**
 * `POST /api/v0/instances/{id}/ssh/`: `{success, msg, key}`, where `key` is the key record as a JSON *text*
 * (recorded from the live service).
 */
export const AttachSshKeyResponse = z.looseObject({ success: z.boolean(), msg: z.string().optional(), key: z.string().optional() });

/**
 * `GET /api/v0/instances/{id}/ssh/`: the keys that may log into an instance, `{success, ssh_keys}` where `ssh_keys`
 * is a JSON *text* of an array of key records (the vendor's description; no recording), read as an array too.
 */
export const InstanceSshKeysResponse = z.looseObject({ success: z.boolean().optional(), ssh_keys: z.union([z.string(), z.array(SshKey)]) });

/**
 * What is wrong with `text` as one OpenSSH public key line (`<type> <base64> [comment]`), or undefined when it is
 * one. A private key is named as such: pasting the wrong half of a key pair is the usual mistake, and the private
 * half must go nowhere.
 */
export function publicKeyProblem(text: string): string | undefined {
  const line = text.trim();
  if (/PRIVATE KEY/.test(line)) return "is a private key: give the public key (the .pub file), never the private one";
  if (!line || line.includes("\n")) return "must be one OpenSSH public key line, such as `ssh-ed25519 AAAA... me@laptop`";
  const parsed = ssh2().utils.parseKey(line);
  if (parsed instanceof Error) return `is not an OpenSSH public key (${parsed.message})`;
  if (Array.isArray(parsed) && parsed.length !== 1) return "is not one OpenSSH public key (several keys)";
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key.isPrivateKey()) return "is a private key: give the public key (the .pub file), never the private one";
  return undefined;
}

/** One OpenSSH public key line, checked (publicKeyProblem). */
export const OpenSshPublicKey = z.string().superRefine((text, ctx) => {
  const problem = publicKeyProblem(text);
  if (problem) ctx.addIssue({ code: "custom", message: `the SSH key ${problem}` });
});

/**
 * A key's material, `<type> <base64>` without the comment: what tells two keys apart (the service answers a key
 * already registered when it is sent again with another comment). Undefined for a text that is not a key.
 */
export function keyMaterial(line: string | null | undefined): string | undefined {
  if (!line || publicKeyProblem(line)) return undefined;
  const parsed = ssh2().utils.parseKey(line.trim());
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key instanceof Error ? undefined : `${key.type} ${key.getPublicSSH().toString("base64")}`;
}

/**
 * The public key line of a private key (OpenSSH's format or PEM, unencrypted), with its comment: what a program
 * that holds only the private key registers or attaches. Throws when the text is not a private key.
 */
export function publicKeyOfPrivate(privateKey: string): string {
  const parsed = ssh2().utils.parseKey(privateKey);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key instanceof Error || !key?.isPrivateKey()) throw new Error(`not an unencrypted private key${key instanceof Error ? ` (${key.message})` : ""}`);
  return [key.type, key.getPublicSSH().toString("base64"), key.comment].filter(Boolean).join(" ");
}

/** Whether two key lines are the same key, whatever their comments. */
export function sameKey(a: string | null | undefined, b: string | null | undefined): boolean {
  const material = keyMaterial(a);
  return material !== undefined && material === keyMaterial(b);
}
