import { routesOf } from "../../emulator/http/routes";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * No request makes the emulator answer 5xx unless a fault was injected: every endpoint of its route table gets
 * malformed JSON, wrong types, junk in path and query, and each refusal is a 4xx JSON object naming the problem.
 */
let emu: TestEmulator;
beforeAll(async () => {
  emu = await emulator();
});
afterAll(() => emu.close());

const BODIES: (string | undefined)[] = [
  "{not json",
  "[]",
  '"a string"',
  "null",
  "12",
  '{"image": 5, "label": [], "disk": "big", "runtype": "telnet", "state": "flying", "q": 3, "hash_id": {}}',
  '{"limit": -1, "order": "cheap", "type": "free", "gpu_name": {"like": "RTX%"}, "num_gpus": {"eq": "two"}}',
  '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}',
  `{"name": "${"x".repeat(20000)}"}`,
  undefined,
];
const PARAMS = ["abc", "-1", "1e999", "99999999999999999999999", "%00", "1.5"];

it("answers every malformed request with a 4xx JSON object that has a msg", async () => {
  const routes = routesOf(emu.server).filter((r) => r.url.startsWith("/api/"));
  let refused = 0;
  for (const r of routes) {
    const paths = r.url.includes(":") ? PARAMS.map((p) => r.url.replace(/:(\w+)/g, p)) : [r.url, `${r.url}?select_filters=%7Bbad&type=nope&id=x`];
    for (const path of paths) {
      for (const rawBody of r.method === "GET" ? [undefined] : BODIES) {
        const res = await http(emu.url, r.method, path, { key: emu.apiKey, rawBody });
        const label = `${r.method} ${path} ${String(rawBody).slice(0, 40)}`;
        expect([label, res.status < 500]).toEqual([label, true]);
        // Answers are JSON; an error is an object. (A success may be an array where the live service answers one:
        // the SSH key listing.)
        const isObject = typeof res.body === "object" && res.body !== null && !Array.isArray(res.body);
        expect([label, isObject || (res.status < 400 && Array.isArray(res.body))]).toEqual([label, true]);
        // An error says what went wrong (a msg): checked on every answer, so none can skip it.
        refused += res.status >= 400 ? 1 : 0;
        expect([label, res.status < 400 || typeof res.body.msg === "string"]).toEqual([label, true]);
      }
    }
  }
  // Most of these requests are refused: the msg check above ran on them.
  expect(refused).toBeGreaterThan(routes.length);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

it("treats a key sent in odd ways as no key, never as a crash", async () => {
  const routes = routesOf(emu.server).filter((r) => r.url.startsWith("/api/"));
  for (const r of routes) {
    const url = r.url.replace(/:(\w+)/g, "1");
    for (const query of [`api_key=${emu.apiKey}&api_key=${emu.apiKey}`, "api_key=", "api_key[a]=1", `api_key=${"k".repeat(5000)}`]) {
      const res = await http(emu.url, r.method, `${url}?${query}`, { body: r.method === "GET" ? undefined : {} });
      expect([`${r.method} ${url}?${query.slice(0, 30)}`, res.status < 500]).toEqual([`${r.method} ${url}?${query.slice(0, 30)}`, true]);
    }
    const res = await http(emu.url, r.method, url, { headers: { authorization: "Bearer" }, body: r.method === "GET" ? undefined : {} });
    expect(res.status).toBeLessThan(500);
  }
});

it("answers unknown paths and methods with a 404 JSON object", async () => {
  const res = await http(emu.url, "PATCH", "/api/v0/nothing-here/", { key: emu.apiKey, body: {} });
  expect(res).toMatchObject({ status: 404, body: { error: "not_found", msg: expect.any(String) } });
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
});
