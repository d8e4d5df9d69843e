import { FastifyInstance } from "fastify";
import { SshKeyListResponse, SshKeyRequest, SshKeyResponse, SuccessResponse } from "../../sdk/schemas";
import { notFound } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { publicKeyLine, SshKeyRecord, sshKeys } from "../domain/ssh-keys";
import { idParam, route } from "./routes";

const view = (key: SshKeyRecord) => ({ id: key.id, ssh_key: key.key, created_at: key.createdAt / 1000 });

/** The account's SSH keys (`/api/v0/ssh/`, the paths the service's own client uses) and attaching one to an instance. */
export function registerSshKeys(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "POST",
    url: "/api/v0/ssh/",
    permission: "user_write",
    body: SshKeyRequest,
    response: SshKeyResponse,
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
    method: "DELETE",
    url: "/api/v0/ssh/:id/",
    permission: "user_write",
    response: SuccessResponse,
    handler: ({ principal, params }) => {
      sshKeys.remove(principal.user, idParam(params, "id"));
      return { success: true };
    },
  });

  // A key added to the account after an instance was created reaches that instance only this way.
  route(app, market, {
    method: "POST",
    url: "/api/v0/instances/:id/ssh/",
    permission: "instance_write",
    body: SshKeyRequest,
    response: SuccessResponse,
    handler: ({ principal, params, body }) => {
      const id = idParam(params, "id");
      const instance = market.instances.find(principal.user.id, id);
      if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
      const key = publicKeyLine(body.ssh_key);
      instance.sshKeys = [...new Set([...(instance.sshKeys ?? []), key])];
      return { success: true, msg: `SSH key attached to instance ${id}.` };
    },
  });
}
