import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { notFound } from "../domain/errors";
import { instanceView } from "../http/views/instances";
import { Marketplace } from "../domain/marketplace";
import { priceIncreases } from "../domain/price-increases";
import { teams } from "../domain/teams";
import { idParam, parse } from "../http/routes";
import { RATE_LIMITED } from "../domain/ratelimits";
import { Faults, FaultSpec } from "./faults";
import { registerCloudControl } from "./cloud";

/**
 * The emulator control API, under `/_emulator/` and never under `/api/v0/`: it is not part of the service,
 * it lets tests and developers look inside and turn the knobs. It needs no key, so it answers local tools
 * only (see `guardControl`), or is switched off (`--no-control`).
 */
export const ControlSettings = z
  .object({
    contention: z.number().min(0).max(1).optional(),
    lifecycle: z
      .object({ provisioningMs: z.number().min(0).optional(), loadingMs: z.number().min(0).optional(), restartMs: z.number().min(0).optional() })
      .strict()
      .optional(),
    /** The limits per key: `"service"` (the live service's, the default), `"off"`, or some endpoints' own. */
    rateLimits: z
      .union([
        z.enum(["service", "off"]),
        z.partialRecord(z.enum(RATE_LIMITED), z.object({ limit: z.number().int().min(0), windowMs: z.number().int().positive() }).strict()),
      ])
      .optional(),
    /** The daily quota of offer search per key, in offer rows a UTC day; 0 turns it off (the default). */
    searchQuota: z.object({ rowsPerDay: z.number().int().min(0) }).strict().optional(),
    /** The status of the refusal of a bid below the minimum, which still makes a stopped instance: 400, or 200 `success: false`. */
    lowBidStatus: z.union([z.literal(200), z.literal(400)]).optional(),
    /** How many of the next acceptances are the second acceptance of their offer: answered, never booting. */
    doubleAcceptances: z.number().int().min(0).max(10_000).optional(),
    /** Outbids of the emulator's own (emulator/domain/outbids.ts): a running interruptible instance is outbid `perHour` times an hour of the clock on average. */
    outbids: z
      .object({ perHour: z.number().min(0).max(3600).optional(), raise: z.number().min(0).max(10).optional(), holdHours: z.number().positive().max(1e4).optional() })
      .strict()
      .optional(),
  })
  .strict();

/** The settings as `GET /_emulator/state` and `PUT /_emulator/settings` show them. */
function settingsOf(market: Marketplace) {
  return {
    contention: market.contention,
    rateLimits: market.rateLimits.settings,
    lifecycle: market.lifecycle,
    searchQuota: { rowsPerDay: market.searchQuota.rowsPerDay },
    lowBidStatus: market.lowBidStatus,
    doubleAcceptances: market.doubleAcceptances,
    outbids: market.outbids.settings,
  };
}

const NewUser = z.object({ email: z.email(), credit: z.number().optional() }).strict();
const Advance = z.object({ ms: z.number().min(0) }).strict();
const AcceptInvitation = z.object({ team: z.string(), email: z.string() }).strict();
const PriceRaise = z.object({ factor: z.number().gt(1).max(100).default(1.25) }).strict();
const WorkerLoad = z.object({ load: z.number().min(0).max(1e9) }).strict();
const WorkerFailure = z.object({ msg: z.string().max(4096).optional() }).strict();
const Fail = z.object({ status: z.enum(["exited", "unknown", "offline"]), msg: z.string().optional() }).strict();


export function registerControl(app: FastifyInstance, market: Marketplace, faults: Faults): void {
  registerCloudControl(app, market);
  app.get("/_emulator/state", async () => {
    market.settle();
    const now = market.clock.now();
    return {
      now,
      ...settingsOf(market),
      stats: { ...market.stats, outbids: market.outbids.count, faultsInjected: faults.injected, rateLimited: market.rateLimits.refused },
      faults: faults.list(),
      offers_on_market: market.market.countOnMarket(),
      // The emulator process's memory, in MiB: what a long run against it costs.
      memory: Object.fromEntries(Object.entries(process.memoryUsage()).map(([name, bytes]) => [name, Math.round(bytes / 1024 / 102.4) / 10])),
      instances: market.instances.all().map((i) => ({ ...instanceView(i, now, market.lifecycle), owner_id: i.ownerId })),
    };
  });

  app.put("/_emulator/settings", async (request) => {
    const settings = parse(ControlSettings, request.body, "request");
    if (settings.contention !== undefined) market.contention = settings.contention;
    if (settings.lifecycle) market.lifecycle = { ...market.lifecycle, ...settings.lifecycle };
    if (settings.rateLimits) market.rateLimits.choose(settings.rateLimits);
    if (settings.searchQuota) market.searchQuota.rowsPerDay = settings.searchQuota.rowsPerDay;
    if (settings.lowBidStatus !== undefined) market.lowBidStatus = settings.lowBidStatus;
    if (settings.doubleAcceptances !== undefined) market.doubleAcceptances = settings.doubleAcceptances;
    if (settings.outbids) market.outbids.configure(settings.outbids);
    return { success: true, ...settingsOf(market) };
  });

  app.post("/_emulator/clock/advance", async (request) => {
    market.clock.advance(parse(Advance, request.body, "request").ms);
    return { success: true, now: market.clock.now() };
  });

  app.post("/_emulator/instances/:id/fail", async (request) => {
    const { status, msg } = parse(Fail, request.body, "request");
    const id = idParam(request.params as Record<string, string>, "id");
    if (!market.instances.fail(id, status, msg)) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return { success: true };
  });

  // Another client outbids an interruptible instance: it is stopped (the spec's running → stopped on outbid).
  app.post("/_emulator/instances/:id/outbid", async (request) => {
    const id = idParam(request.params as Record<string, string>, "id");
    if (!market.instances.outbid(id)) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return { success: true };
  });

  // The instance's host raises its GPU rate (by `factor`, default 1.25): a pending price increase the renter decides.
  app.post("/_emulator/instances/:id/price-increase", async (request) => {
    const { factor } = parse(PriceRaise, request.body, "request");
    const id = idParam(request.params as Record<string, string>, "id");
    const instance = market.instances.byId(id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    const raise = priceIncreases.raise(instance, factor, market.clock.now());
    return { success: true, pending_price_increase_id: raise.id, new_price_per_hour: raise.newPricePerHour };
  });

  // A serverless worker reports a load (as its `/worker_status/` would): the autoscaler scales on it.
  app.post("/_emulator/workers/:id/load", async (request) => {
    const { load } = parse(WorkerLoad, request.body, "request");
    const worker = workerOf(market, idParam(request.params as Record<string, string>, "id"));
    worker.reportedLoad = load;
    market.autoscaler.tick();
    return { success: true };
  });

  // A serverless worker fails (its model server crashed): it is destroyed and, where the targets need it, replaced.
  app.post("/_emulator/workers/:id/fail", async (request) => {
    const { msg } = parse(WorkerFailure, request.body ?? {}, "request");
    const worker = workerOf(market, idParam(request.params as Record<string, string>, "id"));
    worker.error = msg ?? "failed (control API)";
    market.autoscaler.tick();
    return { success: true };
  });

  // The invitee accepts a team's invitation (the service mails it): a member, and their key in the team (shown once).
  app.post("/_emulator/team-invitations/accept", async (request) => {
    const { team, email } = parse(AcceptInvitation, request.body, "request");
    const owner = market.accounts.allUsers().find((user) => user.team?.name === team);
    if (!owner) throw notFound("not_found", `No team is named ${team}.`);
    const { member, key } = teams.accept(market.accounts, owner, email, market.clock.now());
    return { success: true, user_id: member.id, api_key: key.key, key_id: key.id };
  });

  app.post("/_emulator/users", async (request) => {
    const { email, credit } = parse(NewUser, request.body, "request");
    const user = market.accounts.addUser({ email, ...(credit !== undefined && { credit }) });
    const key = market.accounts.issueKey(user.id, { name: "control" });
    return { success: true, id: user.id, email: user.email, api_key: key.key };
  });

  app.post("/_emulator/faults", async (request) => {
    faults.add(parse(FaultSpec, request.body, "request"));
    return { success: true, faults: faults.list() };
  });

  app.delete("/_emulator/faults", async () => {
    faults.clear();
    return { success: true };
  });
}

/**
 * Whether a request reached a control route. Judged by the route the router matched, never by the raw URL: the
 * router decodes the path and takes absolute-form targets, so `/%5Femulator/state` or `http://x/_emulator/state`
 * reach `/_emulator/state` while their raw URL does not start with it.
 */
export const isControlCall = (request: FastifyRequest): boolean => request.routeOptions.url?.startsWith("/_emulator/") ?? false;

/** The header that carries `--control-token`. */
export const CONTROL_TOKEN_HEADER = "x-emulator-token";

/**
 * Who may use the control API (docs/control-api.md, "The control API's threat model"). It creates users and hands out their
 * keys, shows the 2FA codes sent, moves the clock: a web page in the developer's browser must not reach it.
 * - `Host` must be a loopback name or address: a DNS-rebinding page reaches 127.0.0.1 under its own name.
 * - A browser's `Origin`, when sent, must be this server's own: no other site's page may drive it.
 * - A call that changes state has a JSON body or none: a cross-site form or `text/plain` POST, which a browser
 *   sends without asking first, is refused.
 * - With `controlToken` (shared CI runners, where other users' processes reach loopback too), every call must
 *   carry it in `X-Emulator-Token`; a call that does may then name the emulator by any host (a service
 *   container reached as `emulator:8080`).
 */
export function guardControl(app: FastifyInstance, options: { controlToken?: string }): void {
  const expected = options.controlToken === undefined ? undefined : digest(options.controlToken);
  app.addHook("onRequest", async (request, reply) => {
    if (!isControlCall(request)) return;
    const host = request.headers.host ?? "";
    const token = request.headers[CONTROL_TOKEN_HEADER];
    const tokenGiven = typeof token === "string" && expected !== undefined && timingSafeEqual(digest(token), expected);
    if (expected !== undefined && !tokenGiven) {
      return refuse(reply, 401, "control_token_required", `This emulator's control API needs its token: send it in ${CONTROL_TOKEN_HEADER}.`);
    }
    if (!tokenGiven && !isLoopbackHost(host)) {
      return refuse(reply, 403, "forbidden_host", `The control API answers loopback names only (localhost, 127.0.0.1, [::1]), not Host ${JSON.stringify(host.slice(0, 100))}: call it as http://127.0.0.1:<port>, or start the emulator with --control-token.`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) {
      return refuse(reply, 403, "forbidden_origin", `The control API does not answer pages of other sites (Origin ${JSON.stringify(origin.slice(0, 100))}).`);
    }
    if (!["GET", "HEAD", "OPTIONS"].includes(request.method) && !jsonOrNothing(request)) {
      return refuse(reply, 415, "unsupported_media_type", `Control calls that change state take Content-Type: application/json (or no body), not ${JSON.stringify(String(request.headers["content-type"]).slice(0, 100))}.`);
    }
  });
}

function refuse(reply: FastifyReply, status: number, error: string, msg: string) {
  return reply.status(status).type("application/json").send({ success: false, error, msg });
}

/** `localhost`, `*.localhost` (browsers resolve it to loopback, never by DNS), 127.0.0.0/8, `[::1]`; any port. */
export function isLoopbackHost(host: string): boolean {
  const name = (/^\[([^\]]+)\](?::\d+)?$/.exec(host)?.[1] ?? host.replace(/:\d+$/, "")).toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  if (isIP(name) === 6) return name === "::1" || /^::ffff:127\./.test(name);
  return false;
}

function jsonOrNothing(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  if (type !== undefined) return /^application\/json\s*(;|$)/i.test(type);
  // No type: only a request without a body (browsers send an Origin with every cross-site POST, checked above).
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] === undefined && (length === undefined || length === "0");
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** The serverless worker of instance `id`, or 404. */
function workerOf(market: Marketplace, id: number) {
  const worker = market.serverless.worker(id);
  if (!worker) throw notFound("no_such_worker", `Instance ${id} is no serverless worker. List an endpoint's workers (POST /get_endpoint_workers/).`);
  return worker;
}
