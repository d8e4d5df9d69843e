import { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { describeIssues } from "../../sdk/schemas";
import { Permission, Principal } from "../domain/accounts";
import { ErrorKind, ServiceError, badRequest } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { audit } from "../domain/audit";
import { RateLimitedEndpoint } from "../domain/ratelimits";
import { accepting } from "./accepting";

export interface RouteContext<B, Q> {
  /** The caller; undefined only on routes with `auth: "optional"` called without a key. */
  principal: Principal;
  body: B;
  params: Record<string, string>;
  query: Q;
  /** For headers beside the JSON answer (the 2FA browser session cookie). */
  reply: FastifyReply;
}

/** How an endpoint whose own error contract differs from the rest of `/api/v0/` (2FA) names two refusals. */
export interface RouteErrors {
  /** The code of a body that fails validation or is not JSON (default `invalid_args`). */
  invalidBody?: string;
  /** The kind (status) of a missing or invalid key, `auth_error` (default `unauthorized`, 401). */
  authKind?: ErrorKind;
  /** The code of a body whose only problem lies in one field, by field (an API key's bad permission set: `invalid_permissions`). */
  fields?: Record<string, string>;
}

type Parsed<S, Otherwise> = S extends z.ZodType ? z.infer<S> : Otherwise;

export interface RouteSpec<S extends z.ZodType | undefined, Q extends z.ZodType | undefined = undefined> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  /**
   * The request body's schema (from the SDK's wire schemas); absent for bodiless requests. What is accepted is
   * the looser shape real clients send (see accepting()): nulls for fields not given, numbers as text, other keys.
   */
  body?: S;
  /** The success answer's schema, for the OpenAPI document. */
  response?: z.ZodType;
  /**
   * The query's schema, for GETs and DELETEs that take parameters (`select_filters`, `type`, `id`): the
   * handler's `query` is then the parsed value. Keys it does not name (such as `api_key`) are dropped.
   */
  query?: Q;
  /**
   * The permission category a scoped key needs (see emulator/PERMISSIONS.md). Full-access keys pass every
   * check; instance API keys pass none unless `instanceKey` is set.
   */
  permission: Permission;
  /** Whether an instance API key may call this route (its handler then checks that the instance is its own). */
  instanceKey?: boolean;
  /** Counted against this endpoint's rate limit, per key (see emulator/domain/ratelimits.ts). */
  rateLimit?: RateLimitedEndpoint;
  /** The service refuses keys it does not know in this body (the price-increase decisions): taken as the SDK sends it, not loosened. */
  exactBody?: boolean;
  /** A POST that changes nothing (a search): nothing to save before answering. */
  readOnly?: boolean;
  /**
   * Refusals this endpoint makes beyond those every endpoint can make (400; 401 and 403 unless public; 413 and
   * 415 with a body; 429 when rate-limited): the OpenAPI document lists every status an endpoint answers.
   */
  refusals?: readonly ErrorKind[];
  /**
   * Why a request that the schema allows can still be refused with 400 here: a rule that depends on the state
   * (a bid below the offer's minimum, a wrong 2FA code). Said in the OpenAPI document's 400, so that a client
   * checking the server against the document expects such a 400 from these endpoints only.
   */
  rules?: string;
  /**
   * An id that names nothing (or not yours) is answered 200 with `null`, not 404: the instance read, as the
   * live service answers it (docs/service-facts.md#answers-clients-rely-on).
   */
  missingIsNull?: boolean;
  /**
   * `optional`: a missing key is no error (2FA calls made with a secret only); a bad key still is. `public`: no
   * key is needed nor read (what the service shows anyone, such as the GPU models of the market). `own`: no
   * account key is read here; the handler checks a key of the call's own (an endpoint's, a worker's) and
   * answers 401 for a wrong one (the autoscaler host's calls).
   */
  auth?: "required" | "optional" | "public" | "own";
  errors?: RouteErrors;
  handler: (ctx: RouteContext<Parsed<S, undefined>, Parsed<Q, Record<string, string | undefined>>>) => unknown;
}

/**
 * Declares one endpoint of `/api/v0/`: authenticates the caller, validates the body with the wire schema, calls
 * the domain, and sends its answer as JSON. Every endpoint goes through here, so every one refuses a bad key
 * or a bad body the same way.
 */
export function route<S extends z.ZodType | undefined, Q extends z.ZodType | undefined = undefined>(
  app: FastifyInstance,
  market: Marketplace,
  spec: RouteSpec<S, Q>,
): void {
  const hasParameters = spec.url.includes(":");
  const body = spec.body && (spec.exactBody ? spec.body : accepting(spec.body));
  const query = spec.query && accepting(spec.query, { in: "query" });
  if (!registry.has(app)) registry.set(app, []);
  registry.get(app)!.push({ ...spec, body, query } as unknown as AnyRoute);
  app.route({
    method: spec.method,
    url: spec.url,
    // Rethrown, the renamed error goes on to the server's error handler, which shapes every error body.
    ...(spec.errors && { errorHandler: (error: Error) => { throw renameError(error, spec.errors!); } }),
    handler: async (request, reply) => {
      // `/api/v0/instances/filters/` is its own path, not instance "filters": a method it does not take is 405.
      if (hasParameters && staticMethodsAt(app, request.url.split("?")[0]).length) return unmatched(app, request, reply);
      let result: unknown;
      try {
        const key = spec.auth === "public" || spec.auth === "own" ? undefined : apiKeyOf(request);
        const principal = key === undefined && spec.auth && spec.auth !== "required" ? undefined : market.accounts.authenticate(key);
        if (principal) market.accounts.authorize(principal, spec.permission, spec.instanceKey ?? false);
        if (principal && spec.rateLimit) market.rateLimits.take(spec.rateLimit, principal.key.id);
        if (principal) audit.seen(principal.user, request.ip, market.clock.now());
        const parsedBody = body ? parse(body, request.body, "request body", spec.errors?.fields) : undefined;
        result = await spec.handler({
          principal: principal as Principal,
          body: parsedBody as never,
          params: request.params as Record<string, string>,
          query: (query ? parse(query, request.query, "query parameters") : request.query) as never,
          reply,
        });
        // A change made (not a read, nor a search): the account's history of important actions.
        if (principal && spec.method !== "GET" && !spec.readOnly) {
          market.auditLog.record(principal.user, principal.key, { ip: request.ip, now: market.clock.now(), route: `${spec.method} ${spec.url}`, params: request.params as Record<string, string>, body: parsedBody });
        }
      } finally {
        // A change is on disk (with --data-dir) before the client hears of it: refusals change state too (a
        // failed 2FA attempt counts towards a lockout; an offer lost to contention leaves the market).
        if (spec.method !== "GET" && !spec.readOnly) await market.commit();
      }
      // Returned, not sent here: Fastify sends what an async handler returns (awaiting the reply instead costs a
      // stream listener on every answer).
      reply.type("application/json");
      // A bare JSON text (a team role's change): Fastify would send a string as it is, not as JSON.
      return typeof result === "string" ? JSON.stringify(result) : result;
    },
  });
}

export type AnyRoute = RouteSpec<z.ZodType | undefined, z.ZodType | undefined>;

/** The HTTP status of each kind of refusal. */
export const STATUS: Record<ErrorKind, number> = {
  declined: 200,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  length_required: 411,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

/** Every status an endpoint can answer besides its 200, in order: the common refusals and its own. */
export function statusesOf(spec: AnyRoute): number[] {
  const statuses = new Set<number>([400]);
  if (spec.auth !== "public") {
    statuses.add(STATUS[spec.errors?.authKind ?? "unauthorized"]);
    statuses.add(403);
  }
  if (spec.body) [413, 415].forEach((status) => statuses.add(status));
  // A query can make the URL longer than the server reads (emulator/http/server.ts).
  if (spec.query) statuses.add(414);
  if (spec.rateLimit) statuses.add(429);
  for (const kind of spec.refusals ?? []) statuses.add(STATUS[kind]);
  return [...statuses].sort((a, b) => a - b);
}

const registry = new WeakMap<FastifyInstance, AnyRoute[]>();

/** Every endpoint declared with route() on this server: the OpenAPI document and the permission tests use it. */
export function routesOf(app: FastifyInstance): readonly AnyRoute[] {
  return registry.get(app) ?? [];
}

/** Applies a route's own names for a bad body (including malformed JSON) and a bad key. */
function renameError(error: Error, errors: RouteErrors): Error {
  const status = (error as { statusCode?: number }).statusCode;
  if (errors.invalidBody && error instanceof ServiceError && error.code === "invalid_args") {
    return new ServiceError(error.kind, errors.invalidBody, error.message, error.extra);
  }
  if (errors.invalidBody && !(error instanceof ServiceError) && status && status >= 400 && status < 500) {
    return badRequest(errors.invalidBody, error.message);
  }
  if (errors.authKind && error instanceof ServiceError && error.code === "auth_error") {
    return new ServiceError(errors.authKind, error.code, error.message, error.extra);
  }
  return error;
}

/** The cookie a browser's 2FA login sets (emulator/http/tfa.ts): its value is a session key. */
export const SESSION_COOKIE = "session";

/** The key, from `Authorization: Bearer <key>`, (older clients) `?api_key=<key>`, or a browser's session cookie. */
function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const bearer = header && /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (bearer) return bearer;
  const fromQuery = (request.query as Record<string, unknown>).api_key;
  // `?api_key=a&api_key=b` arrives as a list: no key at all, rather than a guess.
  if (Array.isArray(fromQuery)) return "";
  if (typeof fromQuery === "string" && fromQuery) return fromQuery;
  // Last, so a key a client sends explicitly wins over a cookie its browser carries.
  return new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=([^;\\s]+)`).exec(request.headers.cookie ?? "")?.[1];
}

/**
 * Validates a body or query with its schema; a mismatch is a 400 that names each problem. No body at all reads
 * as `{}` (clients send nothing or `{}` on calls without parameters); a JSON `null` is a body, and not an object.
 */
export function parse<S extends z.ZodType>(schema: S, raw: unknown, what: string, fieldCodes: Record<string, string> = {}): z.infer<S> {
  const value = raw === undefined ? {} : raw;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // Again, keeping the values sent, so the message can say what was wrong with them (not on every call: it costs).
  const error = schema.safeParse(value, { reportInput: true }).error!;
  const fields = new Set(error.issues.map((issue) => String(issue.path[0])));
  const code = fields.size === 1 ? (fieldCodes[[...fields][0]] ?? "invalid_args") : "invalid_args";
  throw badRequest(code, `Invalid ${what}: ${describeIssues(error)}`);
}

/**
 * A path parameter that must be a whole number: digits only (`Number()` would read " " or "0x10" as one). A
 * number too large to be any id is still a number: it names nothing (404), it is not a bad request.
 */
export function idParam(params: Record<string, string>, name: string): number {
  const text = params[name];
  if (!/^\d{1,100}$/.test(text)) throw badRequest("invalid_args", `${name} must be a whole number, got ${JSON.stringify(text).slice(0, 80)}`);
  return Number(text);
}

/** No endpoint took the call: a path of the API with another method is 405 with `Allow`, anything else 404. */
export function unmatched(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split("?")[0];
  const allowed = methodsAt(app, path);
  reply.type("application/json");
  if (allowed.length) {
    reply.status(405).header("allow", allowed.join(", "));
    return reply.send({ success: false, error: "method_not_allowed", msg: `${request.method} is not a method of ${path}: use ${allowed.join(", ")}.` });
  }
  return reply.status(404).send({ success: false, error: "not_found", msg: `No endpoint ${request.method} ${path}` });
}

/**
 * The methods the API takes at `path` (HEAD wherever GET is), none if it is no path of the API. A path that
 * is a path of its own (no parameter) is that path only, as the router reads it: a parameter does not match it.
 */
function methodsAt(app: FastifyInstance, path: string): string[] {
  const own = staticMethodsAt(app, path);
  const methods = new Set(own.length ? own : routesOf(app).filter((route) => patternOf(route.url).test(path)).map((route) => route.method));
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

function staticMethodsAt(app: FastifyInstance, path: string): string[] {
  return routesOf(app).filter((route) => !route.url.includes(":") && patternOf(route.url).test(path)).map((route) => route.method);
}

const patterns = new Map<string, RegExp>();
const patternOf = (url: string) => {
  let pattern = patterns.get(url);
  if (!pattern) patterns.set(url, (pattern = new RegExp(`^${url.replace(/\/+$/, "").replace(/:\w+/g, "[^/]+")}/?$`)));
  return pattern;
};
