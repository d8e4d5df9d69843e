import type { GpuRentalClient } from "./client";
import { SshKey, SshKeyListResponse, SshKeyResponse, SuccessResponse } from "./schemas";

/** Registers a public key (one OpenSSH line) on the account: instances created from then on take it. */
export async function addSshKey(client: GpuRentalClient, publicKey: string): Promise<SshKey> {
  // Adding a key that is already there answers that key: sending it again is safe.
  return client.call({ method: "POST", path: "/api/v0/ssh/", body: { ssh_key: publicKey }, schema: SshKeyResponse, idempotent: true });
}

export async function listSshKeys(client: GpuRentalClient): Promise<SshKey[]> {
  return (await client.call({ method: "GET", path: "/api/v0/ssh/", schema: SshKeyListResponse })).ssh_keys;
}

export async function deleteSshKey(client: GpuRentalClient, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/ssh/${id}/`, body: {}, schema: SuccessResponse });
}

/** Lets a key log into an instance that already exists (one created before the key was registered). */
export async function attachSshKey(client: GpuRentalClient, instanceId: number, publicKey: string): Promise<void> {
  await client.call({ method: "POST", path: `/api/v0/instances/${instanceId}/ssh/`, body: { ssh_key: publicKey }, schema: SuccessResponse, idempotent: true });
}
