import type { Caller } from "./call";
import { AttachSshKeyResponse, InstanceSshKeysResponse, SshKey, SshKeyListResponse, SshKeyResponse, SshKeyUpdateResponse, SuccessResponse } from "./schemas";

/**
 * Registers a public key (one OpenSSH line) on the account: instances created from then on take it. Answers the
 * key record (`{success, key: {...}}` on the wire).
 */
async function addSshKey(client: Caller, publicKey: string): Promise<SshKey> {
  // Adding a key that is already there answers that key: sending it again is safe.
  return (await client.call({ method: "POST", path: "/api/v0/ssh/", body: { ssh_key: publicKey }, schema: SshKeyResponse, idempotent: true })).key;
}

/** The account's keys (a bare array on the wire). */
async function listSshKeys(client: Caller): Promise<SshKey[]> {
  return client.call({ method: "GET", path: "/api/v0/ssh/", schema: SshKeyListResponse });
}

/** Replaces a key's text (a new comment, say); instances that took the old text keep it. */
async function updateSshKey(client: Caller, id: number, publicKey: string): Promise<SshKey> {
  const { key } = await client.call({ method: "PUT", path: `/api/v0/ssh/${id}/`, body: { ssh_key: publicKey }, schema: SshKeyUpdateResponse, idempotent: true });
  return { ...key, id: key.id ?? id };
}

async function deleteSshKey(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/ssh/${id}/`, schema: SuccessResponse });
}

/**
 * Lets a key log into an instance that already exists (one created before the key was registered, or a key that is
 * not the account's). Answers the key's record as the service shows it (JSON text on the wire: its `id` is what
 * `detach` takes), or null when the answer carries none that reads.
 */
async function attachSshKey(client: Caller, instanceId: number, publicKey: string): Promise<SshKey | null> {
  const answer = await client.call({ method: "POST", path: `/api/v0/instances/${instanceId}/ssh/`, body: { ssh_key: publicKey }, schema: AttachSshKeyResponse, idempotent: true });
  const [record] = keyRecords(answer.key === undefined ? "[]" : `[${answer.key}]`);
  return record ?? null;
}

/** The keys that may log into an instance, each with the id `detach` takes (`{success, ssh_keys}`, the keys as JSON text). */
async function instanceSshKeys(client: Caller, instanceId: number): Promise<SshKey[]> {
  const answer = await client.call({ method: "GET", path: `/api/v0/instances/${instanceId}/ssh/`, schema: InstanceSshKeysResponse });
  return typeof answer.ssh_keys === "string" ? keyRecords(answer.ssh_keys) : answer.ssh_keys;
}

/** Stops a key logging into an instance (`DELETE /api/v0/instances/{id}/ssh/{key_id}/`, as the service's own client detaches one). */
async function detachSshKey(client: Caller, instanceId: number, keyId: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/instances/${instanceId}/ssh/${keyId}/`, schema: SuccessResponse, idempotent: true });
}

/** The key records in a JSON text of an array of them; those that do not read are left out. */
function keyRecords(text: string): SshKey[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.flatMap((item) => (SshKey.safeParse(item).success ? [SshKey.parse(item)] : [])) : [];
}

/** `client.sshKeys`: SSH public keys of the account (instances take them when created), and the keys of an instance. */
export function sshKeysApi(client: Caller) {
  return {
    add: (publicKey: string) => addSshKey(client, publicKey),
    list: () => listSshKeys(client),
    update: (id: number, publicKey: string) => updateSshKey(client, id, publicKey),
    delete: (id: number) => deleteSshKey(client, id),
    attach: (instanceId: number, publicKey: string) => attachSshKey(client, instanceId, publicKey),
    ofInstance: (instanceId: number) => instanceSshKeys(client, instanceId),
    detach: (instanceId: number, keyId: number) => detachSshKey(client, instanceId, keyId),
  };
}
