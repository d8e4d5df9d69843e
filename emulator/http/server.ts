import Fastify, { FastifyInstance, FastifyReply } from "fastify";
import { ServiceError } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { guardControl, isControlCall, registerControl } from "../control/routes";
import { registerOutbox } from "../control/outbox";
import { registerTfa } from "./tfa";
import { Faults, installFaults } from "../control/faults";
import { InstanceRouteOptions, registerInstances } from "./instances";
import { registerOffers } from "./offers";
import { registerTemplates } from "./templates";
import { registerVolumes } from "./volumes";
import { registerUsers } from "./users";
import { registerApiKeys } from "./apikeys";
import { registerOpenApi } from "./openapi";
import { registerSshKeys } from "./ssh-keys";
import { registerEnvVars } from "./env-vars";
import { registerPriceIncreases } from "./price-increases";
import { registerTeams } from "./teams";
import { registerWebhooks } from "./webhooks";
import { registerServerless } from "./serverless";
import { registerAutoscalerHost } from "./autoscaler-host";
import { registerDeployments } from "./deployments";
import { STATUS, unmatched } from "./routes";
import { isBlankJson } from "./accepting";
import { registerBilling } from "./billing";
import { registerInstanceWork } from "./instance-work";
import { registerAccount } from "./account";
import { registerNotifications } from "./notifications";
import { registerConsole } from "../console/routes";

export interface ServerOptions extends InstanceRouteOptions {
  /** Serve the emulator control API under `/_emulator/` (clock, contention, state). Default true. */
  controlApi?: boolean;
  /** A token every control call must carry (`X-Emulator-Token`), for runners shared with other users. */
  controlToken?: string;
}

/** Longer request targets are answered 414 (Node's own limit, 16 KB of headers, would answer first). */
const MAX_URL_LENGTH = 8 * 1024;

/** The HTTP face of the marketplace: parsing, status codes and body shapes; no market rules. */
export function buildServer(market: Marketplace, options: ServerOptions = {}, faults = new Faults()): FastifyInstance {
  const app = Fastify({
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1 << 20,
    // A path the router cannot read (bad percent-encoding, a path parameter of more than 100 characters) is a
    // bad request like any other: 400, with the service's error body.
    frameworkErrors: (error, request, reply) => {
      const path = request.url.split("?")[0];
      (reply as FastifyReply).status(400).type("application/json").send({ success: false, error: "invalid_args", msg: `Cannot read the path ${path.slice(0, 200)}: ${error.message.slice(0, 200)}` });
    },
    // A request Node's parser cannot read at all (headers over 16 KB, not HTTP): still the service's error body.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const tooLarge = (error as NodeJS.ErrnoException).code === "HPE_HEADER_OVERFLOW";
      const [status, reason] = tooLarge ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"];
      const body = JSON.stringify({ success: false, error: tooLarge ? "headers_too_large" : "invalid_args", msg: tooLarge ? "The request's headers (URL included) are over 16 KB." : "The request is not HTTP this server can read." });
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    },
  });

  app.addHook("onRequest", async (request, reply) => {
    if (request.url.length <= MAX_URL_LENGTH) return;
    return reply.status(414).type("application/json").send({ success: false, error: "uri_too_long", msg: `The URL is over ${MAX_URL_LENGTH} characters: send long filters in a body (POST /api/v0/bundles/) instead.` });
  });

  if (options.controlApi !== false) guardControl(app, options);

  // Clients send `{}` or nothing on bodiless calls; malformed JSON is the client's error, never a 500.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, text, done) => {
    if (typeof text !== "string" || isBlankJson(text)) return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new ServiceError("bad_request", "invalid_args", `Malformed JSON body: ${(error as Error).message}`), undefined);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    // A call that matched no endpoint can fail before the not-found handler runs (a QUERY without a body type):
    // it is still answered as what it is, 404 or 405.
    if (request.is404) return unmatched(app, request, reply);
    if (error instanceof ServiceError) {
      const { retry_after: retryAfter, resets_at: resetsAt } = error.extra;
      if (error.kind === "rate_limited" && typeof retryAfter === "number") reply.header("Retry-After", String(retryAfter));
      // The daily search quota says when it comes back as the live service does: epoch seconds.
      if (error.kind === "rate_limited" && typeof resetsAt === "number") reply.header("X-RateLimit-Reset", String(resetsAt));
      reply.status(STATUS[error.kind]).type("application/json").send({ success: false, error: error.code, msg: error.message, ...error.extra });
      return;
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      reply.status(status).type("application/json").send({ success: false, error: "invalid_args", msg: (error as Error).message });
      return;
    }
    reply.status(500).type("application/json").send({ success: false, error: "server_error", msg: "Internal emulator error" });
    console.error("emulator: unexpected error", error);
  });

  app.setNotFoundHandler((request, reply) => unmatched(app, request, reply));

  // JSON answers say exactly `application/json`: the service's public Python client refuses any other
  // Content-Type (Fastify would add `; charset=utf-8`, which JSON does not need: it is always UTF-8).
  app.addHook("onSend", async (_request, reply, payload) => {
    const type = reply.getHeader("content-type");
    if (typeof type === "string" && /^application\/json\s*(;|$)/i.test(type)) reply.header("content-type", "application/json");
    return payload;
  });
  installFaults(app, faults);
  // Control calls that change state are saved before they are answered, like the API's own (see route()).
  app.addHook("preSerialization", async (request, _reply, payload) => {
    if (request.method !== "GET" && isControlCall(request)) await market.commit();
    return payload;
  });
  registerOffers(app, market);
  registerInstances(app, market, options);
  registerInstanceWork(app, market);
  registerAccount(app, market);
  registerNotifications(app, market);
  registerTemplates(app, market);
  registerVolumes(app, market);
  registerUsers(app, market);
  registerBilling(app, market);
  registerApiKeys(app, market);
  registerSshKeys(app, market);
  registerEnvVars(app, market);
  registerPriceIncreases(app, market);
  registerTeams(app, market);
  registerWebhooks(app, market);
  registerServerless(app, market);
  registerAutoscalerHost(app, market);
  registerDeployments(app, market);
  registerTfa(app, market);
  registerOpenApi(app);
  if (options.controlApi !== false) registerControl(app, market, faults);
  if (options.controlApi !== false) registerOutbox(app, market);
  if (options.controlApi !== false) registerConsole(app, market, faults, options);
  return app;
}
