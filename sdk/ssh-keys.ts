import type { Caller } from "./call";
import { AttachSshKeyResponse, SshKey, SshKeyListResponse, SshKeyResponse, SuccessResponse } from "./schemas";

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

async function deleteSshKey(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/ssh/${id}/`, body: {}, schema: SuccessResponse });
}

/** Lets a key log into an instance that already exists (one created before the key was registered). */
async function attachSshKey(client: Caller, instanceId: number, publicKey: string): Promise<void> {
  await client.call({ method: "POST", path: `/api/v0/instances/${instanceId}/ssh/`, body: { ssh_key: publicKey }, schema: AttachSshKeyResponse, idempotent: true });
}

/** `client.sshKeys`: SSH public keys of the account (instances take them when created), and attaching one to an instance. */
export function sshKeysApi(client: Caller) {
  return {
    add: (publicKey: string) => addSshKey(client, publicKey),
    list: () => listSshKeys(client),
    delete: (id: number) => deleteSshKey(client, id),
    attach: (instanceId: number, publicKey: string) => attachSshKey(client, instanceId, publicKey),
  };
}
