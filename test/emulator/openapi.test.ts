import SwaggerParser from "@apidevtools/swagger-parser";
import { routesOf, statusesOf } from "../../emulator/http/routes";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * `GET /openapi.json`: an OpenAPI 3.1 document of every endpoint, generated from the route table and its zod
 * schemas, exact enough to be a contract (test/compat/schemathesis.test.ts holds the emulator to it).
 */
let emu: TestEmulator;
let document: any;
beforeAll(async () => {
  emu = await emulator();
  document = (await http(emu.url, "GET", "/openapi.json")).body;
});
afterAll(() => emu.close());

const operation = (method: string, path: string) => document.paths[path]?.[method.toLowerCase()];

it("is a valid OpenAPI 3.1 document with every endpoint of the route table, its permission and its statuses", async () => {
  await SwaggerParser.validate(structuredClone(document));
  expect(document.openapi).toBe("3.1.0");
  const routes = routesOf(emu.server).filter((r) => r.url.startsWith("/api/"));
  expect(routes.length).toBeGreaterThan(40);
  for (const r of routes) {
    const op = operation(r.method, r.url.replace(/:(\w+)/g, "{$1}"));
    expect([r.method, r.url, op?.["x-permission"]]).toEqual([r.method, r.url, r.permission]);
    expect(Object.keys(op.responses).sort()).toEqual(["200", ...statusesOf(r).map(String)].sort());
    for (const status of statusesOf(r)) expect(op.responses[status].content["application/json"].schema.required).toEqual(["msg"]);
  }
});

it("lists the refusals of each endpoint: auth, permission, rate limits, its own (404, 410, 2FA's 401/5xx)", () => {
  const statuses = (method: string, path: string) => Object.keys(operation(method, path).responses);
  expect(statuses("POST", "/api/v0/bundles/")).toEqual(["200", "400", "401", "403", "413", "415", "429"]);
  expect(statuses("PUT", "/api/v0/asks/{offer_id}/")).toEqual(["200", "400", "401", "403", "404", "410", "413", "415", "429"]);
  expect(statuses("GET", "/api/v0/users/current/")).toEqual(["200", "400", "401", "403"]);
  expect(statuses("GET", "/api/v0/gpu_names/unique/")).toEqual(["200", "400"]);
  expect(statuses("POST", "/api/v0/tfa/")).toEqual(["200", "400", "401", "403", "404", "413", "415", "429", "500", "503"]);
  // The 2FA contract answers a missing key 403; rules that depend on state are said.
  expect(operation("GET", "/api/v0/tfa/status/")["x-missing-key-status"]).toBe(403);
  expect(operation("PUT", "/api/v0/asks/{offer_id}/")["x-rules"]).toMatch(/minimum bid/);
  expect(operation("PUT", "/api/v0/asks/{offer_id}/").responses["400"].description).toMatch(/Also refused by rule: .*minimum bid/);
});

it("types path ids as whole numbers and says which bodies are optional", () => {
  const get = operation("GET", "/api/v0/instances/{id}/");
  expect(get.parameters).toEqual([{ name: "id", in: "path", required: true, schema: { type: "integer", minimum: 0 } }]);
  expect(operation("POST", "/api/v0/bundles/").requestBody.required).toBe(false);
  expect(operation("PUT", "/api/v0/asks/{offer_id}/").requestBody.required).toBe(true);
  expect(operation("PUT", "/api/v0/instances/{id}/").requestBody.required).toBe(true);
  expect(operation("POST", "/api/v0/tfa/email/").requestBody.required).toBe(false);
});

it("shows the shapes real clients may send: nulls, numbers as text, other keys, runtype words, either of two fields", () => {
  const create = operation("PUT", "/api/v0/asks/{offer_id}/").requestBody.content["application/json"].schema;
  expect(create.additionalProperties).toBeUndefined();
  const runtype = create.properties.runtype.anyOf;
  expect(runtype[0].anyOf[0].enum).toEqual(["ssh_direct", "ssh_proxy", "ssh", "jupyter_direct", "jupyter_proxy", "jupyter", "args"]);
  expect(new RegExp(runtype[0].anyOf[1].pattern).test("jupyter_direc ssh_direc ssh_proxy")).toBe(true);
  expect(runtype[1]).toEqual({ type: "null" });
  const disk = create.properties.disk.anyOf[0].anyOf;
  expect(disk[0]).toMatchObject({ type: "number", exclusiveMinimum: 0 });
  expect(["16", "0.5", "10.0"].every((text) => new RegExp(disk[1].pattern).test(text))).toBe(true);
  expect(["0", "-1", "1e3", "16GB"].some((text) => new RegExp(disk[1].pattern).test(text))).toBe(false);
  expect(create.anyOf).toEqual([
    { required: ["image"], properties: { image: { not: { type: "null" } } } },
    { required: ["template_hash_id"], properties: { template_hash_id: { not: { type: "null" } } } },
  ]);
  // Volume search: the spec's {q: ...} or the filters at the top level.
  expect(operation("POST", "/api/v0/volumes/search/").requestBody.content["application/json"].schema.anyOf).toHaveLength(2);
});

it("types search filters by field and order by numeric field; JSON-encoded query parameters carry their schema", () => {
  const search = operation("POST", "/api/v0/bundles/").requestBody.content["application/json"].schema;
  const numGpus = search.properties.num_gpus.anyOf[0];
  expect(numGpus.additionalProperties).toBe(false);
  expect(Object.keys(numGpus.properties)).toEqual(["eq", "neq", "lt", "lte", "gt", "gte", "in", "notin"]);
  const order = search.properties.order.anyOf[0].items;
  expect(order.prefixItems[0].enum).toContain("dph_total");
  expect(order.prefixItems[0].enum).not.toContain("gpu_name");
  const [selectFilters] = operation("GET", "/api/v0/template/").parameters;
  expect(selectFilters).toMatchObject({ name: "select_filters", in: "query", required: false, content: { "application/json": { schema: { type: "object" } } } });
  expect(selectFilters.content["application/json"].schema.properties.recommended).toBeDefined();
  const limit = operation("GET", "/api/v1/instances/").parameters.find((p: any) => p.name === "limit");
  expect(limit.schema).toMatchObject({ type: "integer", exclusiveMinimum: 0 });
});

it("answers a method a path does not take with 405 and Allow, and an unknown path with 404", async () => {
  for (const [method, path, allow] of [
    ["PATCH", "/api/v0/template/", "DELETE, GET, HEAD, POST, PUT"],
    ["POST", "/api/v0/instances/4000001/", "DELETE, GET, HEAD, PUT"],
    ["PUT", "/api/v0/instances/filters/", "GET, HEAD"],
    ["OPTIONS", "/api/v0/users/current", "GET, HEAD"],
  ]) {
    const res = await http(emu.url, method, path, { key: emu.apiKey, body: method === "OPTIONS" ? undefined : {} });
    expect([method, path, res.status, res.headers.get("allow"), res.body.error]).toEqual([method, path, 405, allow, "method_not_allowed"]);
  }
  // A method no route of the server knows (QUERY, which fetch sends as it is) is answered alike.
  const query = await fetch(`${emu.url}/api/v0/users/current/`, { method: "QUERY" });
  expect([query.status, query.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  expect((await http(emu.url, "GET", "/api/v0/nothing/", { key: emu.apiKey })).status).toBe(404);
});
