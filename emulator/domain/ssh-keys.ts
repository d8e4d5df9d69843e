import { utils } from "ssh2";
import type { UserRecord } from "./accounts";
import { badRequest, notFound } from "./errors";

/** A public key registered on an account (`POST /api/v0/ssh/`). */
export interface SshKeyRecord {
  id: number;
  /** One OpenSSH public key line: `<type> <base64> [comment]`. */
  key: string;
  createdAt: number;
}

/**
 * The one public key line in `text`, or a 400 that says what is wrong with it. A private key is refused by
 * name: pasting the wrong half of a key pair is the usual mistake, and the private half must go nowhere.
 */
export function publicKeyLine(text: string): string {
  const line = text.trim();
  if (/PRIVATE KEY/.test(line)) {
    throw badRequest("invalid_args", "ssh_key is a private key: send the public key (the .pub file), never the private one.");
  }
  if (!line || line.includes("\n")) throw badRequest("invalid_args", "ssh_key must be one OpenSSH public key line, such as `ssh-ed25519 AAAA... me@laptop`.");
  const parsed = utils.parseKey(line);
  if (parsed instanceof Error || (Array.isArray(parsed) && parsed.length !== 1)) {
    throw badRequest("invalid_args", `ssh_key is not an OpenSSH public key (${parsed instanceof Error ? parsed.message : "several keys"}).`);
  }
  return line;
}

/** The wire blob of a public key line (type and key material, without the comment), for comparing keys. */
export function publicKeyBlob(line: string): Buffer {
  const parsed = utils.parseKey(line);
  if (parsed instanceof Error) throw parsed;
  return (Array.isArray(parsed) ? parsed[0] : parsed).getPublicSSH();
}

/**
 * The account's SSH keys, kept on its user record. The record's `ssh_key` (the spec's "registered SSH public
 * key") shows them all, one per line. As on the live service, an instance gets the keys its account had when it
 * was created; a key added later reaches an existing instance only when attached to it.
 */
export const sshKeys = {
  of(user: UserRecord): SshKeyRecord[] {
    return user.sshKeys ?? [];
  },

  add(user: UserRecord, text: string, now: number): SshKeyRecord {
    const key = publicKeyLine(text);
    const keys = sshKeys.of(user);
    const existing = keys.find((k) => publicKeyBlob(k.key).equals(publicKeyBlob(key)));
    if (existing) return existing;
    const record = { id: Math.max(0, ...keys.map((k) => k.id)) + 1, key, createdAt: now };
    setKeys(user, [...keys, record]);
    return record;
  },

  /** The account's key with this id, or a 404. */
  get(user: UserRecord, id: number): SshKeyRecord {
    const key = sshKeys.of(user).find((k) => k.id === id);
    if (!key) throw notFound("no_such_key", `SSH key ${id} does not exist on this account.`);
    return key;
  },

  /** Replaces a key's text (`PUT /api/v0/ssh/{id}/`): instances that took the old key keep it. */
  update(user: UserRecord, id: number, text: string): SshKeyRecord {
    const key = publicKeyLine(text);
    const updated = { ...sshKeys.get(user, id), key };
    setKeys(user, sshKeys.of(user).map((k) => (k.id === id ? updated : k)));
    return updated;
  },

  remove(user: UserRecord, id: number): void {
    sshKeys.get(user, id);
    setKeys(user, sshKeys.of(user).filter((k) => k.id !== id));
  },
};

/** The instance's keys with `key` added (once, whatever its comment). */
export function withKey(keys: string[] | undefined, key: string): string[] {
  const blob = publicKeyBlob(key);
  return (keys ?? []).some((k) => publicKeyBlob(k).equals(blob)) ? keys! : [...(keys ?? []), key];
}

/** The instance's keys without `key`. */
export function withoutKey(keys: string[] | undefined, key: string): string[] {
  const blob = publicKeyBlob(key);
  return (keys ?? []).filter((k) => !publicKeyBlob(k).equals(blob));
}

function setKeys(user: UserRecord, keys: SshKeyRecord[]): void {
  user.sshKeys = keys;
  user.sshKey = keys.map((k) => k.key).join("\n");
}
