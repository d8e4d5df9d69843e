import { FastifyInstance, FastifyReply } from "fastify";
import {
  CancelCopyRequest,
  CloudConnectionList,
  CloudCopyRequest,
  CopyRequest,
  CopyResponse,
  DepositResponse,
  ExecuteRequest,
  ExecuteResponse,
  InstanceLogsRequest,
  MessageResponse,
  PrepayRequest,
  PrepayResponse,
  ResultUrlResponse,
} from "../../sdk/schemas";
import { cloudConnections } from "../domain/cloud";
import { prepay } from "../domain/deposits";
import { cloudConnectionView, depositView } from "./views/account";
import { badRequest, notFound } from "../domain/errors";
import { instanceIdOf } from "../domain/instance-work";
import { Marketplace } from "../domain/marketplace";
import { idParam, route } from "./routes";

/** Where results are fetched (the service's are files on its storage): no key, an unguessable token. */
const RESULTS_PATH = "/results";

/**
 * The service's operations on an instance's machine and deposit (docs/service-facts.md#instance-logs-and-commands,
 * #copies, #cloud-connections, #prepaid-deposits): logs and commands answered by URL, copies, cloud copies and
 * their cancellation, prepayment. The work is the domain's (emulator/domain/instance-work.ts).
 */
export function registerInstanceWork(app: FastifyInstance, market: Marketplace): void {
  const work = market.instanceWork;
  const resultUrl = (reply: FastifyReply, token: string) => {
    const { protocol, host } = reply.request;
    return `${protocol}://${host}${RESULTS_PATH}/${token}.log`;
  };

  // Not an API call: a result is fetched as a file is, without a key; 404 until ready.
  app.get(`${RESULTS_PATH}/:file`, async (request, reply) => {
    const token = /^([0-9a-f]{32})\.log$/.exec((request.params as { file: string }).file)?.[1];
    const text = token && market.results.read(token);
    if (text === undefined || !token) return reply.status(404).type("text/plain").send("not ready (or no such result)\n");
    return reply.type("text/plain; charset=utf-8").send(text);
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/request_logs/:id/",
    refusals: ["not_found"],
    permission: "instance_read",
    body: InstanceLogsRequest,
    response: ResultUrlResponse,
    handler: ({ principal, params, body, reply }) => {
      market.settle();
      const tail = body.tail === undefined ? undefined : Number(body.tail);
      const token = work.requestLogs(principal.user, idParam(params, "id"), { tail, filter: body.filter || undefined, daemon: String(body.daemon_logs) === "true" });
      return { success: true, result_url: resultUrl(reply, token), msg: "Logs are ready at result_url." };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/command/:id/",
    rules: "an id that is not one of the account's instances (invalid_container_id), a command not allowed (invalid_args), an instance not running (invalid_container)",
    permission: "instance_write",
    body: ExecuteRequest,
    response: ExecuteResponse,
    handler: ({ principal, params, body, reply }) => {
      market.settle();
      const token = work.execute(principal.user, idParam(params, "id"), body.command);
      return { success: true, writeable_path: WRITEABLE_PATH, result_url: resultUrl(reply, token), msg: "Command is executing, wait a few seconds and then view the result_url" };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/commands/copy_direct/",
    refusals: ["not_found"],
    rules: "a path with `..`, a side that is not running, a side that is neither an instance nor this computer (volumes and cloud names are cloud copy's)",
    permission: "instance_write",
    body: CopyRequest,
    response: CopyResponse,
    handler: ({ principal, body }) => {
      market.settle();
      const [src, dst] = [placeOf(body.src_id), placeOf(body.dst_id)];
      if (src === "local" || dst === "local") return localCopy(market, principal.user.id, src, dst);
      work.copyBetween(principal.user, { id: src, path: body.src_path }, { id: dst, path: body.dst_path });
      return { success: true, msg: "Remote to Remote copy initiated - check instance status bar for progress updates (~30 seconds delayed)." };
    },
  });

  for (const [url, kind] of [["/api/v0/commands/copy_direct/", "copy"], ["/api/v0/commands/rclone/", "sync"]] as const) {
    route(app, market, {
      method: "DELETE",
      url,
      refusals: ["not_found"],
      permission: "instance_write",
      body: CancelCopyRequest,
      response: MessageResponse,
      handler: ({ principal, body }) => {
        const id = instanceIdOf(body.dst_id);
        if (id === undefined) throw badRequest("invalid_args", "Invalid dst_id.");
        const canceled = work.cancel(principal.user, kind, id);
        return { success: true, msg: `Remote copy canceled - check instance status bar for progress updates (~30 seconds delayed).`, canceled };
      },
    });
  }

  route(app, market, {
    method: "POST",
    url: "/api/v0/commands/rclone/",
    refusals: ["not_found"],
    rules: "a transfer other than Instance To Cloud or Cloud To Instance, a path with `..`, an instance not running",
    permission: "instance_write",
    body: CloudCopyRequest,
    response: MessageResponse,
    handler: ({ principal, body }) => {
      market.settle();
      const instanceId = instanceIdOf(body.instance_id);
      if (instanceId === undefined) throw badRequest("invalid_args", "Invalid instance_id.");
      const direction = body.transfer.trim().toLowerCase();
      if (direction !== "instance to cloud" && direction !== "cloud to instance") {
        throw badRequest("invalid_args", `Invalid transfer ${JSON.stringify(body.transfer.slice(0, 40))}: "Instance To Cloud" or "Cloud To Instance".`);
      }
      const flags = body.flags ?? [];
      work.cloudCopy(principal.user, { instanceId, connection: body.selected, src: body.src, dst: body.dst, toCloud: direction === "instance to cloud", dryRun: flags.includes("--dry-run") });
      return { success: true, msg: "Cloud Copy Started - check instance status bar for progress updates (~30 seconds delayed)." };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/users/cloud_integrations/",
    permission: "user_read",
    response: CloudConnectionList,
    handler: ({ principal }) => cloudConnections.of(principal.user).map(cloudConnectionView),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/prepay/:id/",
    refusals: ["length_required"],
    rules: "an id that is not one of the account's instances (No such instance)",
    permission: "instance_write",
    body: PrepayRequest,
    response: PrepayResponse,
    handler: ({ principal, params, body }) => {
      market.settle();
      const instance = market.instances.find(principal.user.id, idParam(params, "id"));
      if (!instance) throw badRequest("no_such_instance", "No such instance");
      return { success: true, ...prepay(instance, principal.user, body.amount) };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/balance/:id/",
    refusals: ["not_found"],
    permission: "billing",
    response: DepositResponse,
    handler: ({ principal, params }) => {
      market.settle();
      const instance = market.instances.find(principal.user.id, idParam(params, "id"));
      if (!instance) throw notFound("no_such_instance", "Instance not found.");
      return depositView(instance);
    },
  });
}

/** The CLI strips this from a command's output: the service's machines print the container's path on the host; ours print none. */
const WRITEABLE_PATH = "/var/lib/gpu-rental/container";

/** A side of a copy: an instance's id, or `local` (this computer: none given, or the word). */
function placeOf(value: unknown): number | "local" {
  if (value === undefined || value === null || value === "" || value === "local") return "local";
  const id = instanceIdOf(value);
  if (id === undefined) throw badRequest("invalid_args", `Cannot copy with ${JSON.stringify(String(value).slice(0, 40))}: copy takes an instance (ID or C.ID) or local; cloud storage is cloud copy's (POST /api/v0/commands/rclone/).`);
  return id;
}

/**
 * A copy with this computer on one side: the service answers where the instance's side is reached over SSH, and
 * the client copies itself (the public client with rsync, the SDK over SFTP).
 */
function localCopy(market: Marketplace, ownerId: number, src: number | "local", dst: number | "local") {
  if (src === "local" && dst === "local") throw badRequest("invalid_args", "Invalid copy: both sides are this computer.");
  const id = src === "local" ? (dst as number) : src;
  const instance = market.instances.find(ownerId, id);
  if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist (or is not yours).`);
  if (!market.machineWork?.isUp(instance) || !instance.sshEndpoint) throw badRequest("invalid_args", `Instance ${id} is not running: start it (and wait for running) first.`);
  const { host, port } = instance.sshEndpoint;
  const side = src === "local" ? "dst" : "src";
  return { success: true, msg: "Copy with this computer: reach the instance over SSH.", [`${side}_addr`]: host, [`${side}_port`]: port };
}
