import SwaggerParser from "@apidevtools/swagger-parser";
import { routesOf } from "../../emulator/http/routes";
import { emulator, http, TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
beforeAll(async () => {
  emu = await emulator();
});
afterAll(() => emu.close());

it("serves a valid OpenAPI 3 document of every /api/v0/ endpoint, with the zod schemas' shapes", async () => {
  const res = await http(emu.url, "GET", "/openapi.json");
  expect(res.status).toBe(200);
  const document = res.body;
  await SwaggerParser.validate(structuredClone(document));
  expect(document.openapi).toMatch(/^3\./);

  const routes = routesOf(emu.server).filter((r) => r.url.startsWith("/api/v0/"));
  for (const r of routes) {
    const operation = document.paths[r.url.replace(/:(\w+)/g, "{$1}")]?.[r.method.toLowerCase()];
    expect([r.method, r.url, operation?.["x-permission"]]).toEqual([r.method, r.url, r.permission]);
    if (r.body) expect(operation.requestBody.content["application/json"].schema).toBeDefined();
  }
  // The request body of instance creation is the SDK's schema: its fields and enums.
  const create = document.paths["/api/v0/asks/{offer_id}/"].put.requestBody.content["application/json"].schema;
  // runtype: one of the runtypes, or the words the public Python client joins (service-facts).
  expect(create.properties.runtype.anyOf[0].enum).toEqual(["ssh_direct", "ssh_proxy", "ssh", "jupyter_direct", "jupyter_proxy", "jupyter", "args"]);
  expect(create.properties.runtype.anyOf[1].pattern).toBeDefined();
  // Keys the service does not know are ignored, as it ignores them.
  expect(create.additionalProperties).toBeUndefined();
  const search = document.paths["/api/v0/bundles/"].post.responses["200"].content["application/json"].schema;
  expect(search.properties.offers.items.required).toEqual(expect.arrayContaining(["id", "gpu_name", "num_gpus", "dph_total"]));
});
