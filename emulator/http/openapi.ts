import { FastifyInstance } from "fastify";
import { z } from "zod";
import { ErrorBody } from "../../sdk/schemas";
import { routesOf } from "./routes";

const toSchema = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { target: "openapi-3.0", unrepresentable: "any", io });

/**
 * The OpenAPI 3 document of `/api/v0/`, generated from the routes declared with route() and their zod schemas:
 * the same schemas that validate requests here and responses in the SDK.
 */
export function openApiDocument(app: FastifyInstance): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const error = { description: "Refused; `error` is the service's code, `msg` says why", content: { "application/json": { schema: toSchema(ErrorBody, "output") } } };
  for (const spec of routesOf(app)) {
    const params = [...spec.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const path = spec.url.replace(/:(\w+)/g, "{$1}");
    const operation: Record<string, unknown> = {
      operationId: `${spec.method.toLowerCase()}${path.replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      "x-permission": spec.permission,
      security: spec.auth === "optional" ? [{}, { bearer: [] }] : [{ bearer: [] }],
      parameters: [
        ...params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
        ...queryParameters(spec.query),
      ],
      responses: {
        "200": {
          description: "Success",
          content: { "application/json": { schema: spec.response ? toSchema(spec.response, "output") : { type: "object" } } },
        },
        "400": error,
        "401": error,
        "403": error,
        "404": error,
        "429": error,
      },
    };
    if (spec.body) operation.requestBody = { required: true, content: { "application/json": { schema: toSchema(spec.body, "input") } } };
    paths[path] = { ...paths[path], [spec.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.0.3",
    info: { title: "GPU Rental Service API (gpu-rental emulator)", version: "1.0.0" },
    servers: [{ url: "/" }],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}

/** The query schema's keys as OpenAPI query parameters. */
function queryParameters(schema: z.ZodType | undefined): Record<string, unknown>[] {
  if (!schema) return [];
  const json = toSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

/** Serves the document at `/openapi.json` (no key needed: it describes the API, it is not part of it). */
export function registerOpenApi(app: FastifyInstance): void {
  let document: Record<string, unknown> | undefined;
  app.get("/openapi.json", async () => (document ??= openApiDocument(app)));
}
