import * as nodeHttp from "node:http";
import { AddressInfo } from "node:net";
import { GpuRentalClient } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";

type Case = { name: string; method: string; path: string; body?: unknown; rawBody?: string; names: RegExp };

/**
 * Spec: Errors (`bad_request`: missing fields, wrong types, invalid enum values, malformed JSON). Every endpoint
 * of offers, instances, templates and volumes answers such a request with 400 and a JSON object naming the problem.
 */
describe("request validation", () => {
  let emu: TestEmulator;
  let instanceId: number;

  beforeAll(async () => {
    emu = await emulator();
    const res = await http(emu.url, "PUT", "/api/v0/asks/10000/", { key: emu.apiKey, body: { image: "ubuntu" } });
    instanceId = res.body.new_contract;
  });
  afterAll(() => emu.close());

  const LOGIN = { docker_login_repo: "", docker_login_user: "", docker_login_pass: "" };
  const malformed = "{not json";
  const cases = (): Case[] => [
    // offer search
    { name: "bundles: malformed JSON", method: "POST", path: "/api/v0/bundles/", rawBody: malformed, names: /JSON/ },
    // A form feed is white space to String.trim, not to JSON (schemathesis found it taken as an empty body).
    { name: "bundles: a body of a form feed", method: "POST", path: "/api/v0/bundles/", rawBody: "\x0c", names: /JSON/ },
    { name: "bundles: limit of the wrong type", method: "POST", path: "/api/v0/bundles/", body: { limit: "many" }, names: /limit/ },
    { name: "bundles: unknown type", method: "POST", path: "/api/v0/bundles/", body: { type: "spot" }, names: /type/ },
    { name: "bundles: unknown order direction", method: "POST", path: "/api/v0/bundles/", body: { order: [["dph_total", "up"]] }, names: /order/ },
    { name: "bundles: unknown operator", method: "POST", path: "/api/v0/bundles/", body: { num_gpus: { about: 2 } }, names: /num_gpus/ },
    { name: "bundles: filter not an object", method: "POST", path: "/api/v0/bundles/", body: { num_gpus: 2 }, names: /num_gpus/ },
    { name: "bundles: filter value of the wrong type", method: "POST", path: "/api/v0/bundles/", body: { num_gpus: { eq: "two" } }, names: /num_gpus/ },
    { name: "bundles: in without a list", method: "POST", path: "/api/v0/bundles/", body: { gpu_name: { in: "RTX 4090" } }, names: /gpu_name/ },
    // instance creation
    { name: "asks: malformed JSON", method: "PUT", path: "/api/v0/asks/10001/", rawBody: malformed, names: /JSON/ },
    { name: "asks: missing image and template_hash_id", method: "PUT", path: "/api/v0/asks/10001/", body: {}, names: /image/ },
    { name: "asks: disk of the wrong type", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", disk: "big" }, names: /disk/ },
    { name: "asks: unknown runtype", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", runtype: "telnet" }, names: /runtype/ },
    { name: "asks: unknown target_state", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", target_state: "paused" }, names: /target_state/ },
    { name: "asks: env not an object", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", env: "-e A=1" }, names: /env/ },
    { name: "asks: price not a number", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", price: "cheap" }, names: /price/ },
    { name: "asks: volume_info missing fields", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", volume_info: { create_new: true } }, names: /volume_info/ },
    { name: "asks: runtype words that are not runtypes", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", runtype: "ssh_direc telnet" }, names: /runtype/ },
    { name: "asks: disk as text that is not a number", method: "PUT", path: "/api/v0/asks/10001/", body: { image: "u", disk: "16GB" }, names: /disk/ },
    { name: "asks: offer id not a number", method: "PUT", path: "/api/v0/asks/abc/", body: { image: "u" }, names: /offer_id/ },
    // instance read/update/destroy
    { name: "instances: id not a number", method: "GET", path: "/api/v0/instances/abc/", names: /id/ },
    { name: "instances PUT: malformed JSON", method: "PUT", path: "/api/v0/instances/:instance/", rawBody: malformed, names: /JSON/ },
    { name: "instances PUT: unknown state", method: "PUT", path: "/api/v0/instances/:instance/", body: { state: "paused" }, names: /state/ },
    { name: "instances PUT: missing state and label", method: "PUT", path: "/api/v0/instances/:instance/", body: {}, names: /state or label/ },
    { name: "instances PUT: label of the wrong type", method: "PUT", path: "/api/v0/instances/:instance/", body: { label: 3 }, names: /label/ },
    { name: "instances DELETE: id not a number", method: "DELETE", path: "/api/v0/instances/x/", body: {}, names: /id/ },
    // templates
    { name: "template GET: select_filters not JSON", method: "GET", path: "/api/v0/template/?select_filters=%7B", names: /select_filters/ },
    { name: "template GET: select_filters unknown operator", method: "GET", path: `/api/v0/template/?select_filters=${encodeURIComponent('{"name":{"like":"x"}}')}`, names: /name/ },
    { name: "template GET: select_filters wrong value type", method: "GET", path: `/api/v0/template/?select_filters=${encodeURIComponent('{"id":{"eq":"seven"}}')}`, names: /id/ },
    { name: "template POST: malformed JSON", method: "POST", path: "/api/v0/template/", rawBody: malformed, names: /JSON/ },
    { name: "template POST: missing name", method: "POST", path: "/api/v0/template/", body: { image: "u", ...LOGIN }, names: /name/ },
    { name: "template POST: docker_login_pass of the wrong type", method: "POST", path: "/api/v0/template/", body: { name: "n", image: "u", docker_login_pass: 5 }, names: /docker_login_pass/ },
    { name: "template POST: unknown runtype", method: "POST", path: "/api/v0/template/", body: { name: "n", image: "u", ...LOGIN, runtype: "ssh_direct" }, names: /runtype/ },
    { name: "template POST: private of the wrong type", method: "POST", path: "/api/v0/template/", body: { name: "n", image: "u", ...LOGIN, private: "yes" }, names: /private/ },
    { name: "template POST: recommended_disk_space of the wrong type", method: "POST", path: "/api/v0/template/", body: { name: "n", image: "u", ...LOGIN, recommended_disk_space: "eight" }, names: /recommended_disk_space/ },
    { name: "template PUT: malformed JSON", method: "PUT", path: "/api/v0/template/", rawBody: malformed, names: /JSON/ },
    { name: "template PUT: missing hash_id", method: "PUT", path: "/api/v0/template/", body: { name: "x" }, names: /hash_id/ },
    { name: "template PUT: unknown runtype", method: "PUT", path: "/api/v0/template/", body: { hash_id: "abc", runtype: "telnet" }, names: /runtype/ },
    { name: "template DELETE: malformed JSON", method: "DELETE", path: "/api/v0/template/", rawBody: malformed, names: /JSON/ },
    { name: "template DELETE: missing template_id", method: "DELETE", path: "/api/v0/template/", body: {}, names: /template_id/ },
    { name: "template DELETE: template_id of the wrong type", method: "DELETE", path: "/api/v0/template/", body: { template_id: "seven" }, names: /template_id/ },
    // volumes
    { name: "network search: malformed JSON", method: "POST", path: "/api/v0/network_volumes/search/", rawBody: malformed, names: /JSON/ },
    { name: "network search: q of the wrong type", method: "POST", path: "/api/v0/network_volumes/search/", body: { q: "cheap" }, names: /q/ },
    { name: "network search: unknown order direction", method: "POST", path: "/api/v0/network_volumes/search/", body: { q: { order: [["storage_cost", "sideways"]] } }, names: /order/ },
    { name: "network search: unknown operator", method: "POST", path: "/api/v0/network_volumes/search/", body: { q: { verified: { is: true } } }, names: /verified/ },
    { name: "local search: top-level filter of the wrong shape", method: "POST", path: "/api/v0/volumes/search/", body: { disk_space: 50 }, names: /disk_space/ },
    { name: "local search: malformed JSON", method: "POST", path: "/api/v0/volumes/search/", rawBody: malformed, names: /JSON/ },
    { name: "local search: limit of the wrong type", method: "POST", path: "/api/v0/volumes/search/", body: { q: { limit: "lots" } }, names: /limit/ },
    { name: "network create: malformed JSON", method: "PUT", path: "/api/v0/network_volumes/", rawBody: malformed, names: /JSON/ },
    { name: "network create: missing size", method: "PUT", path: "/api/v0/network_volumes/", body: { id: 70000 }, names: /size/ },
    { name: "network create: id of the wrong type", method: "PUT", path: "/api/v0/network_volumes/", body: { id: "x", size: 1 }, names: /id/ },
    { name: "volume list: unknown type", method: "GET", path: "/api/v0/volumes?type=floppy", names: /type/ },
    { name: "volume delete: missing id", method: "DELETE", path: "/api/v0/volumes/", body: {}, names: /id/ },
    { name: "volume delete: id of the wrong type", method: "DELETE", path: "/api/v0/volumes/?id=abc", body: {}, names: /id/ },
  ];

  it.each(cases().map((c) => [c.name, c] as const))("%s → 400 naming the problem", async (_name, c) => {
    // The instance is created in beforeAll, after the table is built.
    const path = c.path.replace(":instance", String(instanceId));
    const res = await http(emu.url, c.method, path, { key: emu.apiKey, body: c.body, rawBody: c.rawBody });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body).toEqual(expect.objectContaining({ success: false, error: expect.any(String), msg: expect.any(String) }));
    expect(res.body.msg).toMatch(c.names);
  });

  it("no request makes the emulator answer 5xx", async () => {
    const values: unknown[] = [null, true, 0, -1, 1e308, "x", "", [], [1, "a"], {}, { eq: "x" }, { in: "x" }, [[1, 2]], { a: { b: {} } }];
    const fields = ["image", "template_hash_id", "disk", "runtype", "price", "env", "volume_info", "q", "id", "size", "order", "limit", "type",
      "hash_id", "template_id", "name", "select_filters", "state", "label", "extra_filters", "gpu_ram", "verified"];
    const endpoints: [string, string][] = [
      ["POST", "/api/v0/bundles/"], ["PUT", "/api/v0/asks/10002/"], ["PUT", `/api/v0/instances/${instanceId}/`],
      ["POST", "/api/v0/template/"], ["PUT", "/api/v0/template/"], ["DELETE", "/api/v0/template/"],
      ["POST", "/api/v0/network_volumes/search/"], ["POST", "/api/v0/volumes/search/"], ["PUT", "/api/v0/network_volumes/"],
    ];
    const statuses = new Set<number>();
    for (const [method, path] of endpoints) {
      for (const field of fields) {
        for (const value of values) {
          const body = field === "q" ? { q: value } : path.includes("volumes/search") ? { q: { [field]: value } } : { [field]: value };
          const res = await http(emu.url, method, path, { key: emu.apiKey, body });
          statuses.add(res.status);
          if (res.status >= 500) throw new Error(`${method} ${path} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
          expect(typeof res.body).toBe("object");
        }
      }
      for (const raw of ["", "null", "[]", "\"str\"", "42", "{\"a\":", "\u0000"]) {
        const res = await http(emu.url, method, path, { key: emu.apiKey, rawBody: raw });
        if (res.status >= 500) throw new Error(`${method} ${path} raw ${JSON.stringify(raw)} → ${res.status}`);
      }
    }
    for (const query of ["select_filters=null", "select_filters=[]", "select_filters=%22x%22", "select_filters=1", "type=", "id=-1", "id=1e999"]) {
      for (const path of ["/api/v0/template/", "/api/v0/volumes/"]) {
        for (const method of ["GET", "DELETE"]) {
          const res = await http(emu.url, method, `${path}?${query}`, { key: emu.apiKey, body: method === "DELETE" ? {} : undefined });
          if (res.status >= 500) throw new Error(`${method} ${path}?${query} → ${res.status}`);
        }
      }
    }
    expect([...statuses].every((s) => s < 500)).toBe(true);
  });
});

/**
 * The spec does not describe the records of API keys, templates and volumes: a live answer may carry other
 * fields than the emulator's. The SDK needs only ids, `hash_id` and a new key's value; everything else may be
 * missing or null. Answers of the emulator are cut down to that by a proxy, and the SDK still works.
 */
describe("the SDK reads answers with only the fields it needs", () => {
  let emu: TestEmulator;
  let proxy: nodeHttp.Server;
  let client: GpuRentalClient;

  /** What a live answer may be reduced to, by method and path. */
  const reduce = (method: string, path: string, body: any): unknown => {
    if (path.startsWith("/api/v0/auth/apikeys/")) {
      if (method === "POST") return { id: body.id, key: body.key };
      if (body.apikeys) return { apikeys: body.apikeys.map((k: any) => ({ id: k.id, name: null, created_at: null, permissions: null, kind: "other" })) };
      if (body.apikey) return { apikey: { id: body.apikey.id } };
    }
    if (path.startsWith("/api/v0/template/")) {
      if (body.template) return { template: { id: body.template.id, hash_id: body.template.hash_id } };
      if (body.templates) return { templates: body.templates.map((t: any) => ({ id: t.id, hash_id: t.hash_id, name: t.name, recommended: null, runtype: null })) };
    }
    if (path === "/api/v0/network_volumes/" && method === "PUT") return { volume_name: body.volume_name };
    // The live listing names a volume by `label` (the vendor's client shows it so), and may give its instances as objects.
    if (path.startsWith("/api/v0/volumes/") && body.volumes) {
      return { volumes: body.volumes.map((v: any) => ({ id: v.id, label: v.label, type: "network_volume", status: null, instances: v.instances.map((id: number) => ({ id })) })) };
    }
    return body;
  };

  beforeAll(async () => {
    emu = await emulator();
    proxy = nodeHttp.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => ["authorization", "content-type"].includes(k))) as Record<string, string>;
      const upstream = await fetch(emu.url + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const text = await upstream.text();
      const path = req.url!.split("?")[0];
      const out = upstream.ok ? JSON.stringify(reduce(req.method!, path, JSON.parse(text))) : text;
      res.writeHead(upstream.status, { "content-type": "application/json" }).end(out);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const { port } = proxy.address() as AddressInfo;
    client = new GpuRentalClient({ apiUrl: `http://127.0.0.1:${port}`, apiKey: emu.apiKey, minRetryDelayMs: 5, maxRetryDelayMs: 20 });
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    await emu.close();
  });

  it("API keys: created (id and key), listed, fetched and deleted", async () => {
    const created = await client.apiKeys.create({ name: "reduced" });
    expect(created).toEqual({ id: expect.any(Number), key: expect.any(String) });
    expect((await client.apiKeys.list()).map((k) => k.id)).toContain(created.id);
    expect((await client.apiKeys.get(created.id))!.id).toBe(created.id);
    await client.apiKeys.delete(created.id);
  });

  it("templates: created, searched, edited and deleted with id and hash_id only", async () => {
    const template = await client.templates.create({ name: "reduced", image: "ubuntu", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
    expect(template).toEqual({ id: expect.any(Number), hash_id: expect.any(String) });
    expect((await client.templates.search({ id: { eq: template.id } })).map((t) => t.hash_id)).toEqual([template.hash_id]);
    const edited = await client.templates.edit(template.hash_id, { onstart: "echo edited" });
    expect(edited.hash_id).not.toBe(template.hash_id);
    await client.templates.delete({ id: edited.id });
  });

  it("network volumes: created from volume_name alone (found by it among volumes named by label), listed and deleted", async () => {
    const [offer] = await client.volumes.searchNetworkOffers({ limit: 1 });
    const volume = await client.volumes.createNetwork({ offerId: offer.ask_contract_id, size: 5, name: "reduced" });
    expect(volume).toMatchObject({ id: expect.any(Number), label: "reduced" });
    expect(emu.marketplace.volumes.list(emu.marketplace.seededUser.id).map((v) => v.id)).toEqual([volume.id]);
    expect((await client.volumes.list()).map((v) => v.id)).toEqual([volume.id]);
    await client.volumes.delete(volume.id);
    expect(await client.volumes.list()).toEqual([]);
  });
});
