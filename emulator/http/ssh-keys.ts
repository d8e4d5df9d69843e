import { FastifyInstance } from "fastify";
import { SshKeyListResponse, SshKeyRequest, SshKeyResponse, SuccessResponse } from "../../sdk/schemas";
import { notFound } from "../domain/errors";
import { InstanceRecord } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { publicKeyLine, SshKeyRecord, sshKeys, withKey, withoutKey } from "../domain/ssh-keys";
import { idParam, route } from "./routes";

/** What no schema can say of a key: its material must parse (a 400 otherwise, as the service's client checks too). */
const KEY_RULE = "ssh_key must be one OpenSSH public key line whose key material parses (`ssh-ed25519 AAAA... me@laptop`); a private key is refused";

const view = (key: SshKeyRecord) => ({ id: key.id, ssh_key: key.key, created_at: key.createdAt / 1000 });

/**
 * The account's SSH keys (`/api/v0/ssh/`, the paths the service's public client uses), and attaching a key to
 * an instance or detaching it (`/api/v0/instances/{id}/ssh/`).
 */
export function registerSshKeys(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "POST",
    url: "/api/v0/ssh/",
    permission: "user_write",
    body: SshKeyRequest,
    response: SshKeyResponse,
    rules: KEY_RULE,
    handler: ({ principal, body }) => ({ success: true, ...view(sshKeys.add(principal.user, body.ssh_key, market.clock.now())) }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/ssh/",
    permission: "user_read",
    response: SshKeyListResponse,
    handler: ({ principal }) => ({ ssh_keys: sshKeys.of(principal.user).map(view) }),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/ssh/:id/",
    permission: "user_write",
    body: SshKeyRequest,
    response: SshKeyResponse,
    refusals: ["not_found"],
    rules: KEY_RULE,
    handler: ({ principal, params, body }) => ({ success: true, ...view(sshKeys.update(principal.user, idParam(params, "id"), body.ssh_key)) }),
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
    response: SuccessResponse,
    refusals: ["not_found"],
    rules: KEY_RULE,
    handler: ({ principal, params, body }) => {
      const instance = ownInstance(principal.user.id, params);
      instance.sshKeys = withKey(instance.sshKeys, publicKeyLine(body.ssh_key));
      return { success: true, msg: `SSH key attached to instance ${instance.id}.` };
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
