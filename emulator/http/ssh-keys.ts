import { FastifyInstance } from "fastify";
import { AttachSshKeyResponse, InstanceSshKeysResponse, SshKeyListResponse, SshKeyRequest, SshKeyResponse, SuccessResponse } from "../../sdk/schemas";
import { notFound } from "../domain/errors";
import type { InstanceRecord, SshKeyRecord } from "../domain/records";
import { Marketplace } from "../domain/marketplace";
import { sshKeys } from "../domain/ssh-keys";
import { idParam, route } from "./routes";

/** What no schema can say of a key: its material must parse (a 400 otherwise, as the service's client checks too). */
const TEAM_RULE = "a team account has no SSH keys of its own (team_ssh_keys_not_supported)";
const KEY_RULE = `ssh_key must be one OpenSSH public key line whose key material parses (\`ssh-ed25519 AAAA... me@laptop\`); a private key is refused; ${TEAM_RULE}`;

/**
 * A key as the live service shows it: the key line as `public_key` (the answer of an addition, recorded) and as
 * `key` (the vendor's listing), `created_at` in epoch seconds (a float, recorded), `deleted_at` null.
 */
const view = (userId: number | null, key: SshKeyRecord) => ({
  id: key.id,
  user_id: userId,
  public_key: key.key,
  key: key.key,
  created_at: key.createdAt / 1000,
  deleted_at: null,
});

/**
 * The account's SSH keys (`/api/v0/ssh/`, the paths the service's public client uses), and attaching a key to
 * an instance, listing its keys or detaching one (`/api/v0/instances/{id}/ssh/`), in the live shapes: a listing is
 * a bare array, an addition or a change answers `{success, key: {...}}`, an attachment `{success, msg, key}` with
 * the key as JSON text; an instance's keys are `{success, ssh_keys}`, JSON text too (the vendor's description).
 */
export function registerSshKeys(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "POST",
    url: "/api/v0/ssh/",
    permission: "user_write",
    body: SshKeyRequest,
    response: SshKeyResponse,
    rules: KEY_RULE,
    handler: ({ principal, body }) => ({ success: true, key: view(principal.user.id, sshKeys.add(principal.user, body.ssh_key, market.clock.now())) }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/ssh/",
    rules: TEAM_RULE,
    permission: "user_read",
    response: SshKeyListResponse,
    handler: ({ principal }) => sshKeys.listed(principal.user).map((key) => view(principal.user.id, key)),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/ssh/:id/",
    permission: "user_write",
    body: SshKeyRequest,
    response: SshKeyResponse,
    refusals: ["not_found"],
    rules: KEY_RULE,
    handler: ({ principal, params, body }) => ({ success: true, key: view(principal.user.id, sshKeys.update(principal.user, idParam(params, "id"), body.ssh_key)) }),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/ssh/:id/",
    rules: TEAM_RULE,
    permission: "user_write",
    response: SuccessResponse,
    refusals: ["not_found"],
    handler: ({ principal, params }) => {
      sshKeys.remove(principal.user, idParam(params, "id"));
      return { success: true };
    },
  });

  const ownInstance = (ownerId: number, params: Record<string, string>): InstanceRecord => {
    const id = idParam(params, "id");
    const instance = market.instances.find(ownerId, id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return instance;
  };

  // A key added to the account after an instance was created reaches that instance only this way.
  route(app, market, {
    method: "POST",
    url: "/api/v0/instances/:id/ssh/",
    permission: "instance_write",
    body: SshKeyRequest,
    response: AttachSshKeyResponse,
    refusals: ["not_found"],
    rules: KEY_RULE,
    handler: ({ principal, params, body }) => {
      const record = sshKeys.attach(principal.user, ownInstance(principal.user.id, params), body.ssh_key, market.clock.now());
      // The live answer shows the key's record as JSON text: the account's key, or the attachment's own (user_id null).
      const registered = sshKeys.of(principal.user).some((k) => k.id === record.id);
      const shown = { ...view(registered ? principal.user.id : null, record), default: null, private_key: null };
      return { success: true, msg: "SSH key added to instance.", key: JSON.stringify(shown) };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/:id/ssh/",
    permission: "instance_read",
    response: InstanceSshKeysResponse,
    refusals: ["not_found"],
    handler: ({ principal, params }) => {
      const keys = sshKeys.ofInstance(principal.user, ownInstance(principal.user.id, params));
      return { success: true, ssh_keys: JSON.stringify(keys.map((key) => view(principal.user.id, key))) };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/instances/:id/ssh/:keyId/",
    permission: "instance_write",
    response: SuccessResponse,
    refusals: ["not_found"],
    handler: ({ principal, params }) => {
      const instance = ownInstance(principal.user.id, params);
      const key = sshKeys.detach(principal.user, instance, idParam(params, "keyId"));
      return { success: true, msg: `SSH key ${key.id} detached from instance ${instance.id}.` };
    },
  });
}
