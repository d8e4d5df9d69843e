import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * The emulator serves every renter-side operation of the vendor's description of the live service: each is sent to
 * it (parameters filled in, the body the description's example or `{}`), and none may be answered as a route the
 * emulator does not have (404 "No endpoint ...", or 405 for a path it has with another method). Refusals of the call
 * itself (a bad body, an id that names nothing) are answers: the operation is served. The host side is left out:
 * `/api/v0/machines...`, a host's earnings, and unlisting a volume offer (docs/service-facts.md#paths-beyond-the-spec).
 */
const VENDOR = resolve(__dirname, "../../../shared/real-service/vendor-openapi.yaml");
const missing = existsSync(VENDOR) ? "" : ` (skipped: the vendor's description is not at ${VENDOR} on this machine)`;
if (missing) console.warn(`test/conformance/vendor-operations.test.ts${missing}`);

/** The host side of the description: what a machine's owner calls, not a renter. */
const HOST_SIDE = [/^\/api\/v0\/machines(\/|$)/, /\/machine-earnings$/, /^\/api\/v0\/volumes\/unlist$/];

type Json = Record<string, any>;

(missing ? describe.skip : describe)(`every renter-side operation of the vendor's description, sent to the emulator${missing}`, () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());

  it("none is answered as a route the emulator does not have", async () => {
    const vendor = parseYaml(readFileSync(VENDOR, "utf8"));
    const userId = emu.marketplace.accounts.authenticate(emu.apiKey).user.id;
    const operations = Object.entries<Json>(vendor.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item).filter(([, op]) => typeof op === "object" && op?.responses).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
    );
    const renterSide = operations.filter(({ path }) => !HOST_SIDE.some((pattern) => pattern.test(path)));
    expect(renterSide.length).toBeGreaterThan(80);
    const unknown: string[] = [];
    for (const { method, path, op } of renterSide) {
      // Each parameter filled in: the user's own id where the path names a user, else a number (or a name).
      const url = `${path.replace(/\{user_id\}/g, String(userId)).replace(/\{(\w+)\}/g, (_, name) => (name === "name" ? "judged" : "1"))}/`;
      const body = method === "GET" ? undefined : exampleBody(op) ?? {};
      const res = await http(emu.url, method, url, { key: emu.apiKey, body });
      const unserved = (res.status === 404 && /^No endpoint /.test(String(res.body?.msg))) || (res.status === 405 && res.body?.error === "method_not_allowed");
      if (unserved) unknown.push(`${method} ${path}`);
    }
    expect(unknown).toEqual([]);
  });
});

/** The description's example of an operation's JSON body, if it gives one. */
function exampleBody(op: Json): unknown {
  const content = op.requestBody?.content?.["application/json"];
  if (!content) return undefined;
  if (content.example !== undefined) return content.example;
  const examples = Object.values<Json>(content.examples ?? {});
  return examples[0]?.value;
}
