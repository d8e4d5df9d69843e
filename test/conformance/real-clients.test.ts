import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * docs/service-facts.md#requests-real-clients-send: the request shapes real clients
 * send (nulls for fields not given, numbers as text, keys the spec does not list, combined runtypes, volume
 * filters without `q`), the paths they use beside the spec's, and the exact JSON Content-Type they demand. The
 * client itself is driven against the emulator by test/compat/; these are the same facts over raw HTTP.
 */
describe("what real clients send and read", () => {
  let emu: TestEmulator;
  const call = (method: string, path: string, body?: unknown) => http(emu.url, method, path, { key: emu.apiKey, body });
  const cheapest = async (filters: Record<string, unknown> = {}) =>
    (await call("POST", "/api/v0/bundles/", { order: [["dph_total", "asc"]], limit: 1, ...filters })).body.offers[0];
  /** The body the public Python client (1.9.1) sends for `create instance ID --image I --ssh --direct --env ...`. */
  const pythonCreate = (extra: Record<string, unknown> = {}) => ({
    client_id: "me", image: "pytorch/pytorch", env: { "-p 8081:8081/udp": "1", TZ: "UTC", "-h": "billybob" }, price: null,
    disk: 40.0, label: null, extra: null, onstart: "echo hi", image_login: null, python_utf8: false, lang_utf8: false,
    use_jupyter_lab: false, jupyter_dir: null, force: false, cancel_unavail: false, template_hash_id: null, user: null,
    runtype: "ssh_direc ssh_proxy", ...extra,
  });

  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(() => emu.close());

  it("answers JSON with Content-Type exactly application/json, errors included", async () => {
    for (const res of [await call("POST", "/api/v0/bundles/", {}), await call("GET", "/api/v0/instances/abc/"), await http(emu.url, "GET", "/api/v0/users/current/")]) {
      expect(res.headers.get("content-type")).toBe("application/json");
    }
  });

  it("creates an instance from the Python client's body: nulls are fields not given, its own keys are ignored", async () => {
    const offer = await cheapest();
    const res = await call("PUT", `/api/v0/asks/${offer.id}/`, pythonCreate({ volume_info: undefined, readme_visible: true }));
    expect(res).toMatchObject({ status: 200, body: { success: true, new_contract: expect.any(Number) } });
    const instance = (await call("GET", `/api/v0/instances/${res.body.new_contract}/`)).body.instances;
    expect(instance).toMatchObject({ image_runtype: "ssh_direct", is_bid: false, template_hash_id: null, label: "", disk_space: 40, onstart: "echo hi" });
    // `-p` maps a port; `-h` is a docker option, not a variable.
    expect(Object.keys(instance.ports).sort()).toEqual(["22/tcp", "8081/udp"]);
    expect(instance.extra_env).toEqual([["TZ", "UTC"]]);
  });

  it.each([
    ["ssh_direc ssh_proxy", "ssh_direct", ["22/tcp"]],
    ["ssh_proxy", "ssh_proxy", []],
    ["jupyter_direc ssh_direc ssh_proxy", "jupyter_direct", ["22/tcp", "8080/tcp"]],
    ["jupyter_proxy ssh_proxy", "jupyter_proxy", []],
    ["args", "args", []],
  ])("reads the runtype words %j as %s", async (words, runtype, ports) => {
    const offer = await cheapest();
    const res = await call("PUT", `/api/v0/asks/${offer.id}/`, pythonCreate({ runtype: words, env: {} }));
    expect(res.status).toBe(200);
    const instance = (await call("GET", `/api/v0/instances/${res.body.new_contract}/`)).body.instances;
    expect([instance.image_runtype, Object.keys(instance.ports).sort()]).toEqual([runtype, ports]);
  });

  it("takes numbers as text and nulls for fields not given, and still refuses what is not a number", async () => {
    const t = await call("POST", "/api/v0/template/", {
      name: "py", image: "ubuntu", tag: null, href: null, repo: null, env: null, onstart: null, jup_direct: false, ssh_direct: false,
      use_jupyter_lab: false, runtype: "args", use_ssh: false, jupyter_dir: null, docker_login_repo: null,
      extra_filters: { verified: { eq: true } }, recommended_disk_space: "16", readme: null, readme_visible: true, desc: null, private: true,
    });
    expect(t).toMatchObject({ status: 200, body: { template: { recommended_disk_space: 16, tag: "latest", env: "", private: true } } });
    expect(await call("POST", "/api/v0/template/", { name: "py", image: "ubuntu", recommended_disk_space: "16 GB" })).toMatchObject({
      status: 400,
      body: { error: "invalid_args", msg: expect.stringMatching(/recommended_disk_space/) },
    });
    const offers = (await call("POST", "/api/v0/bundles/", { num_gpus: { eq: "1" }, reliability: { gte: "0.95" }, gpu_name: null, limit: "5" })).body.offers;
    expect(offers).toHaveLength(5);
    expect(offers.every((o: any) => o.num_gpus === 1 && o.reliability >= 0.95)).toBe(true);
  });

  it("searches volume offers with the filters under q (the spec) or at the top level (the Python client), alike", async () => {
    const filters = { verified: { eq: true }, disk_space: { gte: 1000 }, order: [["storage_cost", "asc"]], allocated_storage: 2000 };
    for (const path of ["/api/v0/network_volumes/search/", "/api/v0/volumes/search/"]) {
      const wrapped = await call("POST", path, { q: filters });
      const flat = await call("POST", path, filters);
      expect([wrapped.status, flat.status]).toEqual([200, 200]);
      expect(flat.body.offers).toEqual(wrapped.body.offers);
      expect(flat.body.offers.length).toBeGreaterThan(0);
      expect(flat.body.offers.every((o: any) => o.verified && o.disk_space >= 2000 && o.id === o.ask_contract_id)).toBe(true);
    }
    // The client's default order is by score, which volume offers carry.
    const byScore = (await call("POST", "/api/v0/volumes/search/", { order: [["score", "desc"]], limit: 10 })).body.offers.map((o: any) => o.score);
    expect(byScore).toEqual([...byScore].sort((a, b) => b - a));
  });

  it("rents a local volume on a machine (PUT /api/v0/volumes/), which an instance of that machine then links", async () => {
    const [offer] = (await call("POST", "/api/v0/volumes/search/", { order: [["disk_space", "desc"]], limit: 1 })).body.offers;
    const rented = await call("PUT", "/api/v0/volumes/", { size: 20, id: offer.id, name: "scratch" });
    expect(rented).toMatchObject({ status: 200, body: { success: true, volume_name: "scratch", volume_size: 20, id: expect.any(Number) } });
    const listed = (await call("GET", "/api/v0/volumes/?type=local_volume")).body.volumes.find((v: any) => v.id === rented.body.id);
    expect(listed).toMatchObject({ type: "local_volume", name: "scratch", label: "scratch", disk_space: 20, machine_id: offer.machine_id });
    expect(await call("PUT", "/api/v0/volumes/", { size: offer.disk_space + 1, id: offer.id })).toMatchObject({ status: 400, body: { error: "invalid_size" } });
    const created = await call("PUT", `/api/v0/asks/${offer.id}/`, pythonCreate({ volume_info: { mount_path: "/data", create_new: false, volume_id: rented.body.id } }));
    expect(created.status).toBe(200);
    const [volume] = (await call("GET", "/api/v0/volumes?owner=me&type=local_volume")).body.volumes;
    expect(volume).toMatchObject({ id: rented.body.id, instances: [created.body.new_contract] });
  });

  it("edits a template at PUT /api/v1/template/ by id and hash_id; an id and a hash of two templates name none", async () => {
    const t = (await call("POST", "/api/v0/template/", { name: "v1", image: "ubuntu" })).body.template;
    const other = (await call("POST", "/api/v0/template/", { name: "other", image: "ubuntu" })).body.template;
    const edited = await call("PUT", "/api/v1/template/", { id: t.id, hash_id: t.hash_id, name: "v1", image: "ubuntu", onstart: "echo v1", env: null });
    expect(edited).toMatchObject({ status: 200, body: { success: true, template: { id: t.id, onstart: "echo v1" } } });
    expect(edited.body.template.hash_id).not.toBe(t.hash_id);
    const mixed = await call("PUT", "/api/v1/template/", { id: other.id, hash_id: edited.body.template.hash_id, onstart: "x" });
    expect(mixed).toMatchObject({ status: 404, body: { error: "no_such_template" } });
    expect(await call("DELETE", "/api/v0/template/", { template_id: other.id, hash_id: t.hash_id })).toMatchObject({ status: 404 });
  });

  it("lists instances in pages at GET /api/v1/instances/, following next_token, filtered and ordered", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) {
      const offer = await cheapest();
      ids.push((await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", label: i % 2 ? "odd" : "even" })).body.new_contract);
    }
    const seen: number[] = [];
    let token: string | null | undefined;
    let pages = 0;
    do {
      const query = `select_filters=${encodeURIComponent("{}")}&order_by=${encodeURIComponent('[{"col": "id", "dir": "asc"}]')}&limit=25${token ? `&after_token=${token}` : ""}`;
      const page = await call("GET", `/api/v1/instances/?${query}`);
      expect(page).toMatchObject({ status: 200, body: { total_instances: 30 } });
      seen.push(...page.body.instances.map((i: any) => i.id));
      expect(page.body.instances.every((i: any) => typeof i.start_date === "number" && Array.isArray(i.extra_env))).toBe(true);
      token = page.body.next_token;
      pages++;
    } while (token);
    expect([pages, seen]).toEqual([2, ids]);
    const odd = await call("GET", `/api/v1/instances/?select_filters=${encodeURIComponent('{"label": {"in": ["odd"]}}')}&order_by=${encodeURIComponent('[{"col": "id", "dir": "desc"}]')}`);
    expect(odd.body.instances.map((i: any) => i.id)).toEqual(ids.filter((_, i) => i % 2).reverse());
    expect(odd.body).toMatchObject({ total_instances: 15, next_token: null, label_counts: { odd: 15 } });
    const filters = (await call("GET", "/api/v0/instances/filters/")).body.filters;
    expect(filters).toContainEqual(expect.objectContaining({ actual_status: null, gpu_name: expect.any(String) }));
  });

  it("launches by criteria (PUT /api/v0/launch_instance/): the best offer of q, passing over one taken meanwhile", async () => {
    const q = { gpu_name: { eq: "RTX 4090" }, num_gpus: { eq: "1" }, order: [["dph_total", "asc"]], type: "on-demand", limit: 3, allocated_storage: 16.0 };
    const [best, second] = (await call("POST", "/api/v0/bundles/", q)).body.offers;
    emu.marketplace.market.take(best.id, { kind: "other_tenant" });
    const res = await call("PUT", "/api/v0/launch_instance/", { image: "ubuntu", disk: 16, q, env: {}, label: "launched", runtype: "ssh_direc ssh_proxy", template_hash_id: null });
    expect(res).toMatchObject({ status: 200, body: { success: true, new_contract: expect.any(Number) } });
    const instance = (await call("GET", `/api/v0/instances/${res.body.new_contract}/`)).body.instances;
    expect(instance).toMatchObject({ machine_id: second.machine_id, label: "launched", image_runtype: "ssh_direct" });
    const none = await call("PUT", "/api/v0/launch_instance/", { image: "ubuntu", q: { gpu_name: { eq: "GTX 280" } } });
    expect(none).toMatchObject({ status: 404, body: { error: "no_such_ask" } });
  });

  it("shows invoices in the shapes the Python client reads: the old view, charges and invoices by page", async () => {
    const offer = await cheapest();
    const id = (await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu" })).body.new_contract;
    emu.marketplace.clock.advance(3_600_000);
    const now = emu.marketplace.clock.nowSeconds();
    const old = (await call("GET", `/api/v0/users/me/invoices?owner=me&sdate=0&edate=${now + 1}&inc_charges=true`)).body;
    const charge = old.invoices.find((row: any) => row.type === "charge");
    expect(charge).toMatchObject({ instance_id: id, timestamp: now, amount: expect.any(Number), description: expect.stringContaining(String(id)) });
    const payment = old.invoices.find((row: any) => row.type === "payment");
    expect(payment.amount).toBeCloseTo(old.credit + charge.amount, 5);
    expect(old.current.charges).toBeCloseTo(charge.amount, 6);
    const window = encodeURIComponent(JSON.stringify({ day: { gte: 0, lte: now + 1 } }));
    const charges = (await call("GET", `/api/v0/charges/?select_filters=${window}&latest_first=false&limit=20&format=table`)).body;
    expect(charges).toMatchObject({ count: 1, total: 1, next_token: null, results: [{ type: "instance", source: String(id), amount: charge.amount, items: [], metadata: {} }] });
    const invoices = (await call("GET", `/api/v1/invoices/?select_filters=${encodeURIComponent(JSON.stringify({ when: { gte: 0, lte: now } }))}&limit=20`)).body;
    expect(invoices.results).toEqual([expect.objectContaining({ type: "credit", amount: -payment.amount, metadata: { invoice_id: emu.marketplace.seededUser.id, service: "emulator" } })]);
    const earlier = encodeURIComponent(JSON.stringify({ day: { lte: now - 7200 } }));
    expect((await call("GET", `/api/v0/charges/?select_filters=${earlier}`)).body.total).toBe(0);
  });

  it("names the GPU models of the market to anyone (GET /api/v0/gpu_names/unique/)", async () => {
    const res = await http(emu.url, "GET", "/api/v0/gpu_names/unique/");
    expect(res.status).toBe(200);
    expect(res.body.gpu_names).toContain("RTX 4090");
    expect(res.body.gpu_names).toEqual([...new Set(res.body.gpu_names)].sort());
  });
});
