import { FastifyInstance } from "fastify";
import { AttachSshKeyResponse, SshKeyListResponse, SshKeyRequest, SshKeyResponse, SuccessResponse } from "../../sdk/schemas";
import { notFound } from "../domain/errors";
import { InstanceRecord } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { publicKeyLine, SshKeyRecord, sshKeys, withKey, withoutKey } from "../domain/ssh-keys";
import { idParam, route } from "./routes";

/** What no schema can say of a key: its material must parse (a 400 otherwise, as the service's client checks too). */
const KEY_RULE = "ssh_key must be one OpenSSH public key line whose key material parses (`ssh-ed25519 AAAA... me@laptop`); a private key is refused";

/**
 * A key as the live service shows it: the key line as `public_key` (the answer of an addition, recorded) and as
 * `key` (the vendor's listing), `created_at` in epoch seconds (a float, recorded), `deleted_at` null.
 */
const view = (userId: number, key: SshKeyRecord) => ({
  id: key.id,
  user_id: userId,
  public_key: key.key,
  key: key.key,
  created_at: key.createdAt / 1000,
  deleted_at: null,
});

/**
 * The account's SSH keys (`/api/v0/ssh/`, the paths the service's public client uses), and attaching a key to
 * an instance or detaching it (`/api/v0/instances/{id}/ssh/`), in the live shapes: a listing is a bare array, an
 * addition or a change answers `{success, key: {...}}`, an attachment `{success, msg, key}` with the key as JSON text.
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
    permission: "user_read",
    response: SshKeyListResponse,
    handler: ({ principal }) => sshKeys.of(principal.user).map((key) => view(principal.user.id, key)),
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
      const instance = ownInstance(principal.user.id, params);
      const line = publicKeyLine(body.ssh_key);
      instance.sshKeys = withKey(instance.sshKeys, line);
      // The key of the account with this text, if it is one (the live answer shows the record, as JSON text).
      const registered = sshKeys.of(principal.user).find((k) => k.key === line);
      const record = { id: registered?.id ?? null, user_id: null, default: null, public_key: line, private_key: null, created_at: market.clock.nowSeconds(), deleted_at: null };
      return { success: true, msg: "SSH key added to instance.", key: JSON.stringify(record) };
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
      const key = sshKeys.get(principal.user, idParam(params, "keyId"));
      instance.sshKeys = withoutKey(instance.sshKeys, key.key);
      return { success: true, msg: `SSH key ${key.id} detached from instance ${instance.id}.` };
    },
  });
}
