import { keyMaterial, publicKeyProblem } from "../../sdk/schemas";
import type { InstanceRecord, SshKeyRecord, UserRecord } from "./records";
import { badRequest, notFound } from "./errors";

/**
 * The one public key line in `text`, or a 400 that says what is wrong with it (publicKeyProblem: a private key is
 * refused by name).
 */
export function publicKeyLine(text: string): string {
  const problem = publicKeyProblem(text);
  if (problem) throw badRequest("invalid_args", `ssh_key ${problem}.`);
  return text.trim();
}

/** Whether two key lines are one key (type and key material; the comments may differ). */
function sameMaterial(a: string, b: string): boolean {
  return keyMaterial(a) === keyMaterial(b);
}

/**
 * The account's SSH keys, kept on its user record. The record's `ssh_key` (the spec's "registered SSH public
 * key") shows them all, one per line. As on the live service, an instance gets the keys its account had when it
 * was created; a key added later reaches an existing instance only when attached to it.
 *
 * A key attached to an instance without being registered gets a record of its own, with an id of the same
 * sequence (the live service answers an attachment with such a record, `user_id` null): that id is what detaching
 * it takes. These records are not the account's keys: the listing does not show them.
 */
export const sshKeys = {
  of(user: UserRecord): SshKeyRecord[] {
    return user.sshKeys ?? [];
  },

  /** The account's keys as `GET /api/v0/ssh/` lists them: a team account has none (the live service refuses). */
  listed(user: UserRecord): SshKeyRecord[] {
    personal(user);
    return sshKeys.of(user);
  },

  add(user: UserRecord, text: string, now: number): SshKeyRecord {
    personal(user);
    const key = publicKeyLine(text);
    const keys = sshKeys.of(user);
    const existing = keys.find((k) => sameMaterial(k.key, key));
    if (existing) return existing;
    const record = { id: nextId(user), key, createdAt: now };
    setKeys(user, [...keys, record]);
    return record;
  },

  /** The account's key with this id, or a 404. */
  get(user: UserRecord, id: number): SshKeyRecord {
    personal(user);
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

  /** Lets `text` log into the instance (once, whatever its comment); answers the key's record: the account's, or one of its own. */
  attach(user: UserRecord, instance: InstanceRecord, text: string, now: number): SshKeyRecord {
    const key = publicKeyLine(text);
    if (!(instance.sshKeys ?? []).some((k) => sameMaterial(k, key))) instance.sshKeys = [...(instance.sshKeys ?? []), key];
    return recordOf(user, key) ?? attachedRecord(user, key, now);
  },

  /** Stops the key with this id (the account's, or an attachment's) logging into the instance; a 404 for an id of neither. */
  detach(user: UserRecord, instance: InstanceRecord, id: number): SshKeyRecord {
    const record = [...sshKeys.of(user), ...(user.attachedSshKeys ?? [])].find((k) => k.id === id);
    if (!record) throw notFound("no_such_key", `SSH key ${id} does not exist on this account.`);
    instance.sshKeys = (instance.sshKeys ?? []).filter((k) => !sameMaterial(k, record.key));
    return record;
  },

  /** The keys that may log into the instance, each with its record's id (the account's key, else its attachment's). */
  ofInstance(user: UserRecord, instance: InstanceRecord): SshKeyRecord[] {
    return (instance.sshKeys ?? []).map((key) => ({ ...(recordOf(user, key) ?? attachedRecord(user, key, 0)), key }));
  },
};

/** The account's key, else the attachment record, of this key's material. */
function recordOf(user: UserRecord, key: string): SshKeyRecord | undefined {
  return [...sshKeys.of(user), ...(user.attachedSshKeys ?? [])].find((k) => sameMaterial(k.key, key));
}

/** The record of a key attached without being registered: made at its first attachment. */
function attachedRecord(user: UserRecord, key: string, now: number): SshKeyRecord {
  const found = (user.attachedSshKeys ?? []).find((k) => sameMaterial(k.key, key));
  if (found) return found;
  const record = { id: nextId(user), key, createdAt: now };
  user.attachedSshKeys = [...(user.attachedSshKeys ?? []), record];
  return record;
}

/** Ids of the account's keys and of its attachments come from one sequence. */
function nextId(user: UserRecord): number {
  return Math.max(0, ...[...sshKeys.of(user), ...(user.attachedSshKeys ?? [])].map((k) => k.id)) + 1;
}

function setKeys(user: UserRecord, keys: SshKeyRecord[]): void {
  user.sshKeys = keys;
  user.sshKey = keys.map((k) => k.key).join("\n");
}

/** The account's own SSH keys are refused once it is a team account, as the live service does (a Terraform provider's live tests). */
function personal(user: UserRecord): void {
  if (user.team) throw badRequest("team_ssh_keys_not_supported", `SSH keys are not supported for team accounts (${user.team.name}): attach a key to an instance instead.`);
}
