import { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { describeIssues } from "../../sdk/client";
import { Permission, Principal } from "../domain/accounts";
import { badRequest } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";

export interface RouteContext<B> {
  /** The caller; undefined only on routes with `auth: "optional"` called without a key. */
  principal: Principal;
  body: B;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
}

export interface RouteSpec<S extends z.ZodType | undefined> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  /** The request body's schema (from the SDK's wire schemas); absent for bodiless requests. */
  body?: S;
  /**
   * The permission category a scoped key needs (see emulator/PERMISSIONS.md). Full-access keys pass every
   * check; instance API keys pass none unless `instanceKey` is set.
   */
  permission: Permission;
  /** Whether an instance API key may call this route (its handler then checks that the instance is its own). */
  instanceKey?: boolean;
  /** `optional`: a missing key is no error (2FA calls made with a secret only); a bad key still is. */
  auth?: "required" | "optional";
  handler: (ctx: RouteContext<S extends z.ZodType ? z.infer<S> : undefined>) => unknown;
}

/**
 * Declares one endpoint of `/api/v0/`: authenticates the caller, validates the body with the wire schema, calls
 * the domain, and sends its answer as JSON. Every endpoint goes through here, so every one refuses a bad key
 * or a bad body the same way.
 */
export function route<S extends z.ZodType | undefined>(app: FastifyInstance, market: Marketplace, spec: RouteSpec<S>): void {
  app.route({
    method: spec.method,
    url: spec.url,
    handler: async (request, reply) => {
      const key = apiKeyOf(request);
      const principal = key === undefined && spec.auth === "optional" ? undefined : market.accounts.authenticate(key);
      if (principal) market.accounts.authorize(principal, spec.permission, spec.instanceKey ?? false);
      const body = spec.body ? parseBody(spec.body, request.body) : undefined;
      const result = await spec.handler({
        principal: principal as Principal,
        body: body as never,
        params: request.params as Record<string, string>,
        query: request.query as Record<string, string | undefined>,
      });
      reply.type("application/json").send(result);
    },
  });
}

/** The key, from `Authorization: Bearer <key>` or (older clients) `?api_key=<key>`. */
function apiKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const bearer = header && /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  return bearer || (request.query as Record<string, string | undefined>).api_key || undefined;
}

function parseBody<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw badRequest("invalid_args", `Invalid request body: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** A path parameter that must be a whole number. */
export function idParam(params: Record<string, string>, name: string): number {
  const value = Number(params[name]);
  if (!Number.isInteger(value) || value < 0) throw badRequest("invalid_args", `${name} must be a whole number, got ${JSON.stringify(params[name])}`);
  return value;
}
