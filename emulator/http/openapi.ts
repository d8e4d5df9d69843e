import { FastifyInstance } from "fastify";
import { z } from "zod";
import { ErrorBody } from "../../sdk/schemas";
import { documentedSchema, jsonParameterSchema, shapeOf } from "./accepting";
import { AnyRoute, routesOf, STATUS, statusesOf } from "./routes";

/** A zod schema as JSON Schema 2020-12 (the dialect of OpenAPI 3.1): what a request may be, or what an answer is. */
function toSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", unrepresentable: "any", io }) as Record<string, unknown>;
  return json;
}

const REFUSALS: Record<number, string> = {
  400: "Bad request: a body, query or path that is not what the schema says (malformed JSON included)",
  401: "No valid API key (missing, unknown, revoked or expired)",
  403: "The key may not do this (a scoped key without the endpoint's permission category, an instance key elsewhere than its own instance)",
  404: "What the request names does not exist, or is not yours",
  410: "The offer cannot start at once and cancel_unavail was set",
  413: "The body is larger than 1 MiB",
  414: "The URL is over 8 KB (a long query): send long filters in a body where the endpoint takes one",
  415: "The body is not JSON (Content-Type application/json)",
  429: "Too many requests; Retry-After says when to come back",
  500: "The service failed on its side; retry",
  503: "A backing store is unavailable; retry",
};

/**
 * The OpenAPI 3.1 document of the API, generated from the routes declared with route(): each operation's
 * parameters, body and answers are the zod schemas that validate requests here and responses in the SDK, in
 * the shapes the emulator accepts (see accepting()). Every status an operation can answer is listed with its
 * body; a method a path does not take is answered 405 with `Allow` (not an operation, so not listed).
 */
export function openApiDocument(app: FastifyInstance): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const error = toSchema(ErrorBody, "output");
  for (const spec of routesOf(app)) {
    const path = spec.url.replace(/:(\w+)/g, "{$1}");
    const refusals = Object.fromEntries(
      statusesOf(spec).map((status) => {
        const rules = status === 400 && spec.rules ? `. Also refused by rule: ${spec.rules}` : "";
        return [String(status), { description: `${REFUSALS[status]}${rules}`, content: { "application/json": { schema: error } } }];
      }),
    );
    const operation: Record<string, unknown> = {
      operationId: `${spec.method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      "x-permission": spec.permission,
      // The status of a call without a key, where it is not 401 (the 2FA contract: 403 auth_error).
      ...(spec.auth !== "public" && spec.auth !== "own" && spec.errors?.authKind && { "x-missing-key-status": STATUS[spec.errors.authKind] }),
      // Rules that refuse a request the schema allows (see RouteSpec.rules), for tools that test the contract.
      ...(spec.rules && { "x-rules": spec.rules }),
      ...(spec.missingIsNull && { "x-missing-is-null": true }),
      // A key of the call's own (an endpoint's, a worker's), checked by the handler: no account key scheme applies.
      ...(spec.auth === "own" && { "x-own-key": true }),
      security: spec.auth === "public" || spec.auth === "own" ? [] : spec.auth === "optional" ? [{}, { bearer: [] }, { api_key: [] }] : [{ bearer: [] }, { api_key: [] }],
      parameters: [...pathParameters(spec), ...queryParameters(spec.query)],
      responses: {
        "200": { description: "Success", content: { "application/json": { schema: spec.response ? toSchema(spec.response, "output") : { type: "object" } } } },
        ...refusals,
      },
    };
    if (spec.body) {
      // Required when `{}` is not a valid body; otherwise a call may send none.
      const required = !spec.body.safeParse({}).success;
      operation.requestBody = { required, content: { "application/json": { schema: toSchema(spec.body, "input") } } };
    }
    paths[path] = { ...paths[path], [spec.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: { title: "GPU Rental Service API (gpu-rental emulator)", version: "1.0.0" },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        // Older clients send the key in the query instead (docs/service-facts.md#requests-real-clients-send).
        api_key: { type: "apiKey", in: "query", name: "api_key" },
      },
    },
    paths,
  };
}

/** Path parameters are the ids of the API (whole numbers), or a name where the service names a thing (a team's role). */
function pathParameters(spec: AnyRoute): Record<string, unknown>[] {
  return [...spec.url.matchAll(/:(\w+)/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: name === "name" ? { type: "string", minLength: 1 } : { type: "integer", minimum: 0 },
  }));
}

/** The query schema's fields as OpenAPI parameters; a JSON-encoded one (`select_filters`) with the schema of its JSON. */
function queryParameters(schema: z.ZodType | undefined): Record<string, unknown>[] {
  const shape = schema && shapeOf(schema);
  if (!shape) return [];
  return Object.entries(shape).map(([name, field]) => {
    const json = jsonParameterSchema(field);
    const required = !field.safeParse(undefined).success;
    return json
      ? { name, in: "query", required, content: { "application/json": { schema: toSchema(json, "input") } } }
      : { name, in: "query", required, schema: toSchema(documentedSchema(field), "input") };
  });
}

/** Serves the document at `/openapi.json` (no key needed: it describes the API, it is not part of it). */
export function registerOpenApi(app: FastifyInstance): void {
  let document: Record<string, unknown> | undefined;
  app.get("/openapi.json", async () => (document ??= openApiDocument(app)));
}
