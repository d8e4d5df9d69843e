import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { totp } from "../../sdk/tfa";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { findPython } from "../helpers/python";
import { VastaiCli, VASTAI_REQUIREMENTS } from "../helpers/vastai";

/**
 * The emulator judged by a client that is not ours, as moto is judged by boto3: the service's public Python
 * client (`vastai` 1.9.1 from PyPI, unchanged, in a cached virtual environment) runs its renter commands with
 * `--url <emulator>`, and each test asserts what the command printed (`--raw` JSON where it has it) and what
 * the emulator's state became. The client exits 0 even when a call failed, so exit codes prove nothing here.
 */
const python = findPython();
const skipped = "missing" in python ? ` (skipped: ${python.missing})` : "";
if (skipped) console.warn(`test/compat/vastai.test.ts${skipped}`);

(skipped ? describe.skip : describe)(`the public Python client (${VASTAI_REQUIREMENTS.join(", ")}) against the emulator${skipped}`, () => {
  let emu: TestEmulator;
  let cli: VastaiCli;
  const api = (method: string, url: string, body?: unknown) => http(emu.url, method, url, { key: emu.apiKey, body });
  const instance = async (id: number) => (await api("GET", `/api/v0/instances/${id}/`)).body.instances;
  const advance = (ms: number) => emu.marketplace.clock.advance(ms);
  /** The id of an offer on the market matching `query` (the emulator's own search), for commands that take one. */
  const offerId = async (query: Record<string, unknown> = {}) =>
    (await api("POST", "/api/v0/bundles/", { order: [["dph_total", "asc"]], limit: 1, ...query })).body.offers[0].id as number;

  beforeAll(async () => {
    emu = await emulator();
    cli = await VastaiCli.install(python as Exclude<typeof python, { missing: string }>, emu.url, emu.apiKey);
  }, 15 * 60_000);
  afterAll(async () => {
    cli?.close();
    await emu?.close();
  });

  it("the console script bin/vastai, run as a process, prints what `run` gives (its fork server)", async () => {
    const calls: [string[], { stdin?: string; key?: string }][] = [
      [["--raw", "search", "offers", "num_gpus=1", "--limit", "3"], {}],
      [["show", "instances"], {}],
      [["destroy", "instance", "999"], { stdin: "n\n" }], // a prompt answered on stdin
      [["--raw", "show", "user"], { key: "not-a-known-key" }], // a failure
      [["no-such-command"], {}], // argparse's usage, exit 2
    ];
    for (const [args, options] of calls) expect(await cli.runProcess(args, options)).toEqual(await cli.run(args, options));
  });

  describe("offers", () => {
    it("search offers 'num_gpus=1 reliability>0.95' --raw: the client's default filters and score order", async () => {
      const offers = await cli.raw(["search", "offers", "num_gpus=1 reliability>0.95", "--limit", "10"]);
      expect(offers).toHaveLength(10);
      expect(offers.every((o: any) => o.num_gpus === 1 && o.reliability > 0.95 && o.verified && o.rentable)).toBe(true);
      const scores = offers.map((o: any) => o.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      // The same as the emulator's own search with the filters the client sends.
      const same = await api("POST", "/api/v0/bundles/", { num_gpus: { eq: 1 }, reliability: { gt: 0.95 }, verified: { eq: true }, order: [["score", "desc"]], limit: 10 });
      expect(offers.map((o: any) => o.id)).toEqual(same.body.offers.map((o: any) => o.id));
    });

    it("search offers 'gpu_name=RTX_4090 gpu_ram>=24' -o dph_total --raw: names with underscores, GB, ascending order", async () => {
      const offers = await cli.raw(["search", "offers", "gpu_name=RTX_4090 gpu_ram>=24", "-o", "dph_total", "--limit", "50"]);
      expect(offers.length).toBeGreaterThan(0);
      expect(offers.every((o: any) => o.gpu_name === "RTX 4090" && o.gpu_ram >= 24000)).toBe(true);
      const prices = offers.map((o: any) => o.dph_total);
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
    });

    it("search offers 'geolocation in [US,CA] num_gpus>=2' -o 'num_gpus-,dph_total' --raw: lists, several keys", async () => {
      const offers = await cli.raw(["search", "offers", "geolocation in [US,CA] num_gpus>=2", "-o", "num_gpus-,dph_total", "--limit", "40"]);
      expect(offers.length).toBeGreaterThan(0);
      expect(offers.every((o: any) => /, (US|CA)$/.test(o.geolocation) && o.num_gpus >= 2)).toBe(true);
      for (let i = 1; i < offers.length; i++) {
        const [a, b] = [offers[i - 1], offers[i]];
        expect(a.num_gpus > b.num_gpus || (a.num_gpus === b.num_gpus && a.dph_total <= b.dph_total)).toBe(true);
      }
    });

    it("search offers -i and -r --raw: interruptible prices at the minimum bid; reserved discounted", async () => {
      const bids = await cli.raw(["search", "offers", "-i", "--limit", "5"]);
      expect(bids.every((o: any) => o.is_bid && o.dph_total === o.min_bid)).toBe(true);
      const onDemand = await cli.raw(["search", "offers", "-o", "id", "--limit", "3"]);
      const reserved = await cli.raw(["search", "offers", "-r", "-o", "id", "--limit", "3"]);
      expect(reserved.map((o: any) => o.id)).toEqual(onDemand.map((o: any) => o.id));
      reserved.forEach((o: any, i: number) => expect(o.dph_total).toBeCloseTo(onDemand[i].dph_total * 0.8, 3));
    });

    it("search offers (table): the offers of the raw search, by id", async () => {
      const raw = await cli.raw(["search", "offers", "num_gpus=8", "--limit", "5"]);
      const table = await cli.ok(["search", "offers", "num_gpus=8", "--limit", "5"]);
      for (const offer of raw) expect(table).toContain(String(offer.id));
    });
  });

  describe("instances", () => {
    const created = (out: any) => {
      expect(out).toMatchObject({ success: true, new_contract: expect.any(Number) });
      return out.new_contract as number;
    };

    // Each: the flags, the runtype they make, its ports, and what else of the flags the instance shows.
    it.each<[string[], string, string[], Record<string, unknown>]>([
      [["--ssh", "--direct"], "ssh_direct", ["22/tcp"], {}],
      [["--ssh"], "ssh_proxy", [], {}],
      [["--jupyter", "--direct"], "jupyter_direct", ["22/tcp", "8080/tcp"], {}],
      [["--jupyter", "--jupyter-lab", "--jupyter-dir", "/workspace"], "jupyter_proxy", [], { use_jupyter_lab: true, jupyter_dir: "/workspace" }],
      [["--onstart-cmd", "python serve.py", "--args", "--port", "8000"], "args", [], { image_args: ["--port", "8000"] }],
    ])("create instance ID %j --raw: runtype %s", async (flags, runtype, ports, shown) => {
      const id = created(await cli.raw(["create", "instance", String(await offerId()), "--image", "pytorch/pytorch", ...flags]));
      const view = await instance(id);
      expect([view.image_runtype, Object.keys(view.ports).sort()]).toEqual([runtype, ports]);
      expect(view).toMatchObject(shown);
    });

    it("create instance ID with env, ports, onstart, label, disk --raw", async () => {
      const id = created(
        await cli.raw([
          "create", "instance", String(await offerId()), "--image", "bob/app:1.2", "--disk", "40", "--label", "web",
          "--env", "-e TZ=UTC -e MODE=prod -p 8081:8081/udp -p 9000:9000", "--onstart-cmd", "env >> /etc/environment",
          "--ssh", "--direct", "--login", "-u bob -p s3cret docker.io",
        ]),
      );
      const view = await instance(id);
      expect(view).toMatchObject({ label: "web", disk_space: 40, image_uuid: "bob/app:1.2", onstart: "env >> /etc/environment", docker_login_user: "bob" });
      expect(view.extra_env).toEqual([["TZ", "UTC"], ["MODE", "prod"]]);
      expect(Object.keys(view.ports).sort()).toEqual(["22/tcp", "8081/udp", "9000/tcp"]);
      expect(JSON.stringify(view)).not.toContain("s3cret");
    });

    it("create instance ID --bid_price: an interruptible instance at that price", async () => {
      const offer = (await api("POST", "/api/v0/bundles/", { type: "bid", order: [["dph_total", "asc"]], limit: 1 })).body.offers[0];
      const id = created(await cli.raw(["create", "instance", String(offer.id), "--image", "ubuntu", "--bid_price", String(offer.min_bid + 0.01)]));
      expect(await instance(id)).toMatchObject({ is_bid: true, dph_base: Number((offer.min_bid + 0.01).toFixed(4)) });
      const low = await cli.run(["create", "instance", String(await offerId({ type: "bid" })), "--image", "ubuntu", "--bid_price", "0.0001"]);
      expect(low.stderr).toMatch(/Failed with error 400: .*minimum bid/);
    });

    it("change bid ID --price P, and without --price (the winning bid, sent as null)", async () => {
      const offer = (await api("POST", "/api/v0/bundles/", { type: "bid", order: [["dph_total", "asc"]], limit: 1 })).body.offers[0];
      const id = created(await cli.raw(["create", "instance", String(offer.id), "--image", "ubuntu", "--bid_price", String(offer.min_bid)]));
      expect(await cli.ok(["change", "bid", String(id), "--price", String(offer.min_bid * 2)])).toMatch(/bid price changed/i);
      expect(await instance(id)).toMatchObject({ is_bid: true, dph_base: offer.min_bid * 2 });
      await cli.ok(["change", "bid", String(id)]);
      expect(await instance(id)).toMatchObject({ dph_base: offer.min_bid });
    });

    it("reboot instance ID, recycle instance ID: the instance rebooting, then recycling", async () => {
      const id = created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu"]));
      advance(10 * 60_000);
      expect(await cli.ok(["reboot", "instance", String(id)])).toBe(`Rebooting instance ${id}.\n`);
      expect(await instance(id)).toMatchObject({ actual_status: "rebooting" });
      advance(10 * 60_000);
      expect(await cli.ok(["recycle", "instance", String(id)])).toBe(`Recycling instance ${id}.\n`);
      expect(await instance(id)).toMatchObject({ actual_status: "recycling" });
    });

    it("show pending-price-increases, accept price-increase ID --yes, reject price-increase ID --yes, and a stale one (exit 2)", async () => {
      const [a, b] = [created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu"])), created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu"]))];
      const raised = new Map<number, number>();
      for (const id of [a, b]) raised.set(id, (await api("POST", `/_emulator/instances/${id}/price-increase`, { factor: 1.2 })).body.pending_price_increase_id);
      const listed = await cli.raw(["show", "pending-price-increases"]);
      expect(listed).toMatchObject({ success: true, count: 2 });
      expect(listed.pending_price_increases.map((r: any) => r.contract_id).sort()).toEqual([a, b].sort());
      expect(await cli.ok(["accept", "price-increase", String(a), "--yes"])).toContain(`Accepted pending_id=${raised.get(a)} contract_id=${a}`);
      expect(await cli.ok(["reject", "price-increase", String(b), "--yes"])).toMatch(/Rejected 1 \/ Stale 0 \/ Failed 0 of 1 requested/);
      expect((await api("GET", "/api/v0/instances/pending-price-increases/")).body).toMatchObject({ count: 0, pending_price_increases: [] });
      const stale = await cli.run(["accept", "price-increase", String(a), "--yes"]);
      expect(stale).toMatchObject({ code: 2, stdout: expect.stringContaining(`pending price increase no longer available for instance ${a}`) });
    });

    it("create team, create/show/update/remove team-role(s), invite member, show members, remove member: what it printed, what the team became", async () => {
      const owner = emu.account("vastai-owner@teams.test");
      const as = { key: owner.key };
      const permissions = path.join(os.tmpdir(), `gpu-rental-role-${process.pid}.json`);
      fs.writeFileSync(permissions, JSON.stringify({ api: { instance_read: {}, instance_write: {} } }));
      try {
        expect(await cli.ok(["create", "team", "--team-name", "vastai-team"], as)).toContain("Team Successfully Created!");
        expect(await cli.ok(["create", "team-role", "--name", "ci", "--permissions", permissions], as)).toContain("success");
        const role = JSON.parse(await cli.ok(["show", "team-role", "ci"], as));
        expect(role).toMatchObject({ name: "ci", permissions: { api: { instance_read: {}, instance_write: {} } } });
        expect((await cli.raw(["show", "team-roles"], as)).map((r: any) => r.name)).toEqual(["manager", "member", "ci"]);
        fs.writeFileSync(permissions, JSON.stringify({ api: { instance_read: {} } }));
        expect(await cli.ok(["update", "team-role", String(role.id), "--name", "readers", "--permissions", permissions], as)).toBe('"Successfully Updated Team Role For readers"\n');
        const invitee = emu.account("vastai-member@teams.test");
        expect(await cli.ok(["invite", "member", "--email", "vastai-member@teams.test", "--role", "readers"], as)).toBe("successfully invited vastai-member@teams.test to your current team\n");
        await api("POST", "/_emulator/team-invitations/accept", { team: "vastai-team", email: "vastai-member@teams.test" });
        const members = await cli.raw(["show", "members"], as);
        expect(members.map((m: any) => [m.id, m.roles])).toEqual([[owner.id, ["owner"]], [invitee.id, ["readers"]]]);
        expect(await cli.ok(["remove", "member", String(invitee.id)], as)).toContain("success");
        expect(await cli.ok(["remove", "team-role", "readers"], as)).toContain("Role removed from team");
        expect(emu.marketplace.accounts.user(owner.id)!.team).toMatchObject({ name: "vastai-team", members: [] });
        expect(emu.marketplace.accounts.user(owner.id)!.team!.roles.map((r) => r.name)).toEqual(["owner", "manager", "member"]);
      } finally {
        fs.rmSync(permissions, { force: true });
      }
    });

    it("create subaccount, show subaccounts", async () => {
      const parent = emu.account("vastai-parent@teams.test");
      const made = await cli.ok(["create", "subaccount", "--email", "vastai-sub@teams.test", "--username", "vsub", "--password", "pw-123456", "--type", "host"], { key: parent.key });
      expect(made).toMatch(/'username': 'vsub'/);
      const sub = emu.marketplace.accounts.allUsers().find((u) => u.email === "vastai-sub@teams.test")!;
      expect(sub).toMatchObject({ parentId: parent.id, hostOnly: true });
      expect(await cli.raw(["show", "subaccounts"], { key: parent.key })).toEqual([expect.objectContaining({ id: sub.id, parent_id: parent.id, deleted_at: null })]);
    });

    it("show instance ID --raw and (table), after the boot on the emulator's clock", async () => {
      const id = created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu", "--ssh", "--direct", "--label", "shown"]));
      expect(await cli.raw(["show", "instance", String(id)])).toMatchObject({ id, actual_status: null, label: "shown" });
      advance(10 * 60_000);
      const shown = await cli.raw(["show", "instance", String(id)]);
      expect(shown).toMatchObject({ id, actual_status: "running", ssh_port: expect.any(Number), extra_env: {} });
      expect(await cli.ok(["show", "instance", String(id)])).toMatch(new RegExp(`${id}.*running`));
      expect(await cli.raw(["show", "instance", "999"])).toEqual({ instances: null });
    });

    it("show instances --raw, -q and (table): every page of the v1 listing", async () => {
      // More than the 25 of one page: the client follows next_token.
      while ((await api("GET", "/api/v1/instances/")).body.total_instances < 30) {
        await api("PUT", `/api/v0/asks/${await offerId()}/`, { image: "ubuntu", label: "bulk" });
      }
      const all = (await emu.client().instances.list()).map((i) => i.id).sort((a, b) => a - b);
      const listed = await cli.raw(["show", "instances"]);
      expect(listed.map((i: any) => i.id)).toEqual(all);
      expect(listed.every((i: any) => typeof i.duration === "number" && typeof i.extra_env === "object")).toBe(true);
      expect((await cli.ok(["show", "instances", "-q"])).trim().split("\n").map(Number)).toEqual(all);
      const bulk = (await emu.client().instances.list({ filters: { label: { eq: "bulk" } } })).length;
      const page = await cli.raw(["show", "instances", "--limit", "10", "--label", "bulk"]);
      expect(page).toMatchObject({ total_instances: bulk, next_token: "10" });
      expect(page.instances).toHaveLength(10);
      const table = await cli.ok(["show", "instances", "--cols", "id,status,label"]);
      for (const id of all) expect(table).toContain(String(id));
    });

    it("label instance ID LABEL", async () => {
      const id = created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu"]));
      expect(await cli.ok(["label", "instance", String(id), "renamed"])).toContain(`label for ${id} set to renamed`);
      expect((await instance(id)).label).toBe("renamed");
    });

    it("stop instance ID, then start instance ID", async () => {
      const id = created(await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu"]));
      advance(10 * 60_000);
      expect(await cli.ok(["stop", "instance", String(id)])).toContain(`stopping instance ${id}`);
      expect(await instance(id)).toMatchObject({ actual_status: "exited", intended_status: "stopped" });
      expect(await cli.ok(["start", "instance", String(id)])).toContain(`starting instance ${id}`);
      advance(10 * 60_000);
      expect(await instance(id)).toMatchObject({ actual_status: "running", intended_status: "running" });
    });

    it("destroy instance ID -y: gone at once, its offer back on the market", async () => {
      const offer = await offerId();
      const id = created(await cli.raw(["create", "instance", String(offer), "--image", "ubuntu"]));
      expect(await cli.ok(["destroy", "instance", String(id), "-y"])).toContain(`destroying instance ${id}`);
      expect(await instance(id)).toBeNull();
      expect((await api("POST", "/api/v0/bundles/", { id: { eq: offer } })).body.offers).toHaveLength(1);
    });

    it("launch instance -g RTX_4090 -n 1 -i IMAGE --raw: the best-scored matching offer, in one call", async () => {
      const best = (await api("POST", "/api/v0/bundles/", {
        gpu_name: { eq: "RTX 4090" }, num_gpus: { eq: 1 }, verified: { eq: true }, disk_space: { gte: 32 }, order: [["score", "desc"]], limit: 1,
      })).body.offers[0];
      const id = created(await cli.raw(["launch", "instance", "-g", "RTX_4090", "-n", "1", "-i", "ubuntu", "-d", "32", "--ssh", "--direct", "--label", "launched"]));
      expect(await instance(id)).toMatchObject({ machine_id: best.machine_id, gpu_name: "RTX 4090", num_gpus: 1, disk_space: 32, label: "launched", image_runtype: "ssh_direct" });
      const none = await cli.run(["launch", "instance", "-g", "RTX_4090", "-n", "14", "-i", "ubuntu"]);
      expect(none.stdout).toMatch(/An error occurred: 404/);
    });
  });

  describe("templates", () => {
    let hash: string;
    let id: number;

    it("search templates 'recommended=True'", async () => {
      const out = JSON.parse(await cli.ok(["search", "templates", "recommended=True"]));
      expect(out.map((t: any) => t.name).sort()).toEqual(["NVIDIA CUDA", "PyTorch (CUDA)", "vLLM server"]);
    });

    it("create template with its flags", async () => {
      const out = await cli.ok([
        "create", "template", "--name", "trainer", "--image", "pytorch/pytorch", "--image_tag", "2.4.0", "--env", "-e WANDB_MODE=offline -p 8080:8080",
        "--ssh", "--direct", "--onstart-cmd", "nvidia-smi", "--disk_space", "32", "--search_params", "gpu_ram>=24 num_gpus=1", "--desc", "mine",
      ]);
      expect(out).toContain("New Template:");
      const [template] = JSON.parse(await cli.ok(["search", "templates", "name=trainer"]));
      expect(template).toMatchObject({
        name: "trainer", image: "pytorch/pytorch", tag: "2.4.0", runtype: "ssh", ssh_direct: true, use_ssh: true, onstart: "nvidia-smi",
        recommended_disk_space: 32, private: true, desc: "mine", creator_id: emu.marketplace.seededUser.id,
        extra_filters: { verified: { eq: true }, gpu_ram: { gte: 24000 }, num_gpus: { eq: "1" } },
      });
      [hash, id] = [template.hash_id, template.id];
    });

    it("create instance ID --template_hash HASH --raw: the template's image, runtype, env and disk", async () => {
      const out = await cli.raw(["create", "instance", String(await offerId()), "--template_hash", hash]);
      const view = await instance(out.new_contract);
      expect(view).toMatchObject({ image_uuid: "pytorch/pytorch:2.4.0", image_runtype: "ssh_direct", template_hash_id: hash, disk_space: 10, onstart: "nvidia-smi" });
      expect(view.extra_env).toEqual([["WANDB_MODE", "offline"]]);
      expect(Object.keys(view.ports).sort()).toEqual(["22/tcp", "8080/tcp"]);
    });

    it("update template HASH: PUT /api/v1/template/, a new hash_id", async () => {
      const out = await cli.ok(["update", "template", hash, "--name", "trainer", "--image", "pytorch/pytorch", "--image_tag", "2.5.0", "--ssh", "--direct"]);
      expect(out).toContain("updated template:");
      const [template] = JSON.parse(await cli.ok(["search", "templates", `id=${id}`]));
      expect(template).toMatchObject({ id, tag: "2.5.0", onstart: "nvidia-smi" });
      expect(template.hash_id).not.toBe(hash);
      hash = template.hash_id;
    });

    it("delete template --hash-id HASH and --template-id ID", async () => {
      expect(await cli.ok(["delete", "template", "--hash-id", hash])).toContain(`Template ${id} deleted`);
      expect(JSON.parse(await cli.ok(["search", "templates", `id=${id}`]))).toEqual([]);
      await cli.ok(["create", "template", "--name", "second", "--image", "ubuntu"]);
      const [second] = JSON.parse(await cli.ok(["search", "templates", "name=second"]));
      expect(await cli.ok(["delete", "template", "--template-id", String(second.id)])).toContain(`Template ${second.id} deleted`);
      expect(JSON.parse(await cli.ok(["search", "templates", "name=second"]))).toEqual([]);
    });
  });

  describe("volumes", () => {
    let network: number;
    let local: number;
    let localOffer: any;

    it("search network-volumes --raw and search volumes --raw: filters at the top level, score order", async () => {
      const networkOffers = await cli.raw(["search", "network-volumes", "disk_space>=1000", "--limit", "10"]);
      expect(networkOffers.length).toBeGreaterThan(0);
      expect(networkOffers.every((o: any) => o.disk_space >= 1000 && o.verified && o.id >= 70000)).toBe(true);
      const localOffers = await cli.raw(["search", "volumes", "disk_space>500 inet_down>1000", "--limit", "10"]);
      expect(localOffers).toHaveLength(10);
      expect(localOffers.every((o: any) => o.disk_space > 500 && o.inet_down > 1000 && o.verified)).toBe(true);
      const scores = localOffers.map((o: any) => o.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      localOffer = localOffers[0];
      network = networkOffers[0].id;
    });

    it("create network-volume ID -s 20 -n NAME --raw", async () => {
      // The vendor's answer names the volume, not its id: it is found in the listing by its name.
      const out = await cli.raw(["create", "network-volume", String(network), "-s", "20", "-n", "datasets"]);
      expect(out).toEqual({ success: true, volume_name: "datasets", volume_size: 20 });
      const volume = (await api("GET", "/api/v0/volumes?type=network_volume")).body.volumes.find((v: any) => v.name === "datasets");
      expect(volume).toMatchObject({ type: "network_volume", label: "datasets", disk_space: 20, ask_contract_id: network });
      network = volume.id;
    });

    it("create volume ID -s 10 -n NAME --raw: a local volume on that machine", async () => {
      const out = await cli.raw(["create", "volume", String(localOffer.id), "-s", "10", "-n", "scratch"]);
      expect(out).toMatchObject({ success: true, volume_name: "scratch", volume_size: 10, id: expect.any(Number) });
      local = out.id;
      const listed = (await api("GET", "/api/v0/volumes?type=local_volume")).body.volumes.find((v: any) => v.id === local);
      expect(listed).toMatchObject({ type: "local_volume", name: "scratch", disk_space: 10, machine_id: localOffer.machine_id });
    });

    it("show volumes --raw, -t local, -t network", async () => {
      expect((await cli.raw(["show", "volumes"])).map((v: any) => v.id).sort()).toEqual([network, local].sort());
      expect((await cli.raw(["show", "volumes", "-t", "local"])).map((v: any) => v.id)).toEqual([local]);
      expect((await cli.raw(["show", "volumes", "-t", "network"])).map((v: any) => v.id)).toEqual([network]);
      expect(await cli.ok(["show", "volumes"])).toContain("scratch");
    });

    it("create instance ID --link-volume VOLUME --mount-path PATH: a volume linked at creation", async () => {
      const out = await cli.raw(["create", "instance", String(localOffer.id), "--image", "ubuntu", "--link-volume", String(local), "--mount-path", "/scratch"]);
      expect((await instance(out.new_contract)).volume_info).toEqual({ volume_id: local, mount_path: "/scratch" });
      const withNetwork = await cli.raw(["create", "instance", String(await offerId()), "--image", "ubuntu", "--link-volume", String(network), "--mount-path", "/data"]);
      expect((await instance(withNetwork.new_contract)).volume_info).toEqual({ volume_id: network, mount_path: "/data" });
      const busy = await cli.run(["delete", "volume", String(local)]);
      expect(busy.stderr).toMatch(/Failed with error 400: Volume \d+ is attached to instance/);
      await cli.ok(["destroy", "instance", String(out.new_contract), "-y"]);
      await cli.ok(["destroy", "instance", String(withNetwork.new_contract), "-y"]);
    });

    it("create instance ID --env '-v V.<id>:PATH': the volume mounted as the vendor's docs say", async () => {
      const out = await cli.raw(["create", "instance", String(localOffer.id), "--image", "ubuntu", "--env", `-e HF_HOME=/scratch/hf -v V.${local}:/scratch`]);
      const listed = (await api("GET", "/api/v0/volumes?type=local_volume")).body.volumes.find((v: any) => v.id === local);
      expect(listed.instances).toEqual([out.new_contract]);
      await cli.ok(["destroy", "instance", String(out.new_contract), "-y"]);
    });

    it("create instance ID --create-volume OFFER --volume-size N --mount-path PATH: a new local volume", async () => {
      const offer = await offerId();
      const out = await cli.raw(["create", "instance", String(offer), "--image", "ubuntu", "--create-volume", String(offer), "--volume-size", "12", "--mount-path", "/vol"]);
      const view = await instance(out.new_contract);
      const [volume] = (await api("GET", "/api/v0/volumes?type=local_volume")).body.volumes.filter((v: any) => v.id === view.volume_info.volume_id);
      expect(volume).toMatchObject({ disk_space: 12, instances: [out.new_contract] });
    });

    it("delete volume ID", async () => {
      for (const id of [network, local]) expect(await cli.ok(["delete", "volume", String(id)])).toContain("Deleted.");
      expect((await api("GET", "/api/v0/volumes?type=all_volume")).body.volumes.map((v: any) => v.id)).not.toContain(network);
    });
  });

  describe("API keys", () => {
    let keyId: number;
    let key: string;

    it("create api-key --name NAME --permission_file FILE", async () => {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "perm-")), "read-only.json");
      fs.writeFileSync(file, JSON.stringify({ api: { misc: {}, user_read: {}, instance_read: {} } }));
      const out = await cli.ok(["create", "api-key", "--name", "read-only", "--permission_file", file]);
      const match = /'id': (\d+).*'key': '([0-9a-f]+)'/.exec(out);
      expect(match).not.toBeNull();
      [keyId, key] = [Number(match![1]), match![2]];
      // The key works for what it may do, and is refused the rest.
      expect(await cli.raw(["show", "user"], { key })).toMatchObject({ id: emu.marketplace.seededUser.id });
      expect((await cli.run(["label", "instance", "4000001", "x"], { key })).stderr).toMatch(/Failed with error 403/);
    });

    it("show api-keys --raw and show api-key ID", async () => {
      const { apikeys } = await cli.raw(["show", "api-keys"]);
      expect(apikeys).toContainEqual(expect.objectContaining({ id: keyId, name: "read-only", permissions: { api: { misc: {}, user_read: {}, instance_read: {} } } }));
      expect(JSON.stringify(apikeys)).not.toContain(key);
      expect(await cli.ok(["show", "api-key", String(keyId)])).toContain(`'id': ${keyId}`);
    });

    it("delete api-key ID: the key is refused from then on", async () => {
      expect(await cli.ok(["delete", "api-key", String(keyId)])).toContain("'success': True");
      expect((await cli.run(["--raw", "show", "user"], { key })).stderr).toMatch(/"status_code": 401/);
    });

    it("show user --raw", async () => {
      expect(await cli.raw(["show", "user"])).toMatchObject({ id: emu.marketplace.seededUser.id, email: "demo@gpu-rental.test", balance: expect.any(Number) });
    });
  });

  describe("environment variables", () => {
    const vars = () => emu.marketplace.accounts.user(emu.marketplace.seededUser.id)?.envVars;

    it("create env-var NAME VALUE: kept upper-cased; a second one of that name refused with the service's word", async () => {
      expect(await cli.ok(["create", "env-var", "hf_token", "hf-secret-1"])).toMatch(/HF_TOKEN created/);
      expect(vars()).toEqual({ HF_TOKEN: "hf-secret-1" });
      const again = await cli.run(["create", "env-var", "HF_TOKEN", "other"]);
      expect(`${again.stdout}${again.stderr}`).toMatch(/already exists/);
      expect(vars()).toEqual({ HF_TOKEN: "hf-secret-1" });
    });

    it("show env-vars, --raw and -s: names with values masked, as the service masks them", async () => {
      expect(await cli.ok(["show", "env-vars"])).toMatch(/Name: HF_TOKEN\nValue: \*{5}\n---/);
      expect(await cli.raw(["show", "env-vars"])).toEqual({ HF_TOKEN: "*****" });
      expect(await cli.ok(["show", "env-vars", "-s"])).not.toContain("hf-secret-1");
    });

    it("update env-var NAME VALUE, then delete env-var NAME", async () => {
      expect(await cli.ok(["update", "env-var", "HF_TOKEN", "hf-secret-2"])).toMatch(/HF_TOKEN updated/);
      expect(vars()).toEqual({ HF_TOKEN: "hf-secret-2" });
      expect(await cli.ok(["delete", "env-var", "hf_token"])).toMatch(/HF_TOKEN deleted/);
      expect(vars()).toEqual({});
      const absent = await cli.run(["delete", "env-var", "HF_TOKEN"]);
      expect(`${absent.stdout}${absent.stderr}`).toMatch(/no environment variable HF_TOKEN/);
    });
  });

  describe("2FA", () => {
    let secret: string;
    let methodId: number;
    let backupCodes: string[];
    const code = () => {
      advance(30_000); // a TOTP code is good once: each use is on a later step
      return totp(secret, emu.marketplace.clock.now());
    };
    const emailCode = async () => (await api("GET", "/_emulator/outbox?channel=email")).body.messages.at(-1).code as string;

    it("tfa status --raw: no method yet", async () => {
      expect(await cli.raw(["tfa", "status"])).toMatchObject({ tfa_enabled: false, methods: [], backup_codes_remaining: 0 });
    });

    it("tfa send-email: a code by email and its secret", async () => {
      const out = await cli.ok(["tfa", "send-email"]);
      const sent = /Secret token: ([0-9a-f]+)/.exec(out)![1];
      expect(emu.marketplace.tfa.outbox.list({ channel: "email" }).at(-1)).toMatchObject({ to: "demo@gpu-rental.test" });
      expect(sent).toHaveLength(32);
    });

    it("tfa auth-new, then tfa auth-new --secret S --code C: the window to add a method", async () => {
      const first = await cli.run(["tfa", "auth-new"]); // asks for the code on stdin; given none, it says how to finish
      const pending = /--secret ([0-9a-f]+) --code/.exec(first.stdout)![1];
      expect(await cli.ok(["tfa", "auth-new", "--secret", pending, "--code", await emailCode()])).toContain("Successfully authorized");
      expect(await cli.raw(["tfa", "status"])).toMatchObject({ new_method_authorized: true });
    });

    it("tfa totp-setup --raw, then tfa activate CODE --secret S: the first method, with backup codes", async () => {
      ({ secret } = await cli.raw(["tfa", "totp-setup"]));
      // The client offers to save the backup codes; "3" prints them, once confirmed.
      const out = await cli.ok(["tfa", "activate", "--method-type", "totp", "--secret", secret, "--label", "phone", code()], { stdin: "3\nyes\n" });
      expect(out).toContain("activated successfully");
      backupCodes = out.match(/[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}/g) ?? [];
      expect(backupCodes).toHaveLength(10);
      const status = await cli.raw(["tfa", "status"]);
      expect(status).toMatchObject({ tfa_enabled: true, backup_codes_remaining: 10, methods: [{ method: "totp", label: "phone", is_primary: true }] });
      methodId = status.methods[0].id;
    });

    it("tfa login --method-type totp -c CODE: a session key, saved where the client reads it", async () => {
      expect(await cli.ok(["tfa", "login", "--method-type", "totp", "-c", code()])).toContain("2FA login successful");
      const session = fs.readFileSync(cli.tfaKeyFile, "utf8").trim();
      expect(await cli.raw(["show", "user"], { key: session })).toMatchObject({ id: emu.marketplace.seededUser.id });
    });

    it("tfa update ID --label L", async () => {
      expect(await cli.ok(["tfa", "update", String(methodId), "--label", "work phone"])).toContain("updated successfully");
      expect((await cli.raw(["tfa", "status"])).methods[0].label).toBe("work phone");
    });

    it("tfa send-sms --phone-number N and tfa resend-sms --secret S", async () => {
      const out = await cli.ok(["tfa", "send-sms", "--phone-number", "+14155550123"]);
      const smsSecret = /Secret token: ([0-9a-f]+)/.exec(out)![1];
      advance(60_000);
      expect(await cli.run(["tfa", "resend-sms", "--secret", smsSecret, "--phone-number", "+14155550123"])).toMatchObject({ code: 0 });
      expect(emu.marketplace.tfa.outbox.list({ channel: "sms" }).filter((m) => m.to === "+14155550123")).toHaveLength(2);
    });

    it("tfa regen-codes -c CODE -t totp: ten new codes, the old ones spent", async () => {
      const out = await cli.ok(["tfa", "regen-codes", "-c", code(), "-t", "totp"], { stdin: "y\n3\nyes\n" });
      const fresh = out.match(/[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}/g) ?? [];
      expect(fresh).toHaveLength(10);
      expect(fresh).not.toEqual(backupCodes);
      backupCodes = fresh;
    });

    it("tfa delete --id-to-delete ID --backup-code CODE: 2FA off", async () => {
      const out = await cli.ok(["tfa", "delete", "--id-to-delete", String(methodId), "--backup-code", backupCodes[0]], { stdin: "y\n" });
      expect(out).toContain("deleted successfully");
      expect(await cli.raw(["tfa", "status"])).toMatchObject({ tfa_enabled: false, methods: [] });
    });
  });

  describe("serverless endpoints and worker groups", () => {
    const serverless = () => emu.marketplace.serverless;
    const owner = () => emu.marketplace.seededUser.id;
    /** What the emulator answers the autoscaler host's worker listing: what `get endpt-workers` should print. */
    const workersOf = async (id: number) => (await api("POST", "/get_endpoint_workers/", { id })).body as any[];
    /** The `{...}` the command printed after its words, as JSON (the client prints a Python dict). */
    const printed = (out: string, words: string) => {
      const match = new RegExp(`^${words} (\\{.*\\})$`, "m").exec(out);
      expect({ out, printed: match !== null }).toEqual({ out, printed: true });
      return JSON.parse(match![1].replace(/'/g, '"').replace(/\bTrue\b/g, "true").replace(/\bFalse\b/g, "false").replace(/\bNone\b/g, "null"));
    };
    /**
     * The client sends the autoscaler host's calls (workers, logs) to run.vast.ai when `--url` is `VAST_URL`, as the
     * helper sets it, and to `--url` otherwise: the emulator under another name, for those commands.
     */
    const host = () => {
      const other = emu.url.replace("127.0.0.1", "localhost");
      expect(other).not.toBe(emu.url);
      return ["--url", other];
    };
    let endpointId: number;
    let groupId: number;
    let hash: string;
    let worker: number;

    it("create endpoint --endpoint_name N --min_load ... --raw: the targets given, the client's defaults for the rest", async () => {
      const out = await cli.raw(["create", "endpoint", "--endpoint_name", "llm", "--min_load", "500", "--cold_workers", "0", "--max_workers", "1", "--inactivity_timeout", "600"]);
      expect(out).toEqual({ success: true, result: expect.any(Number) });
      endpointId = out.result;
      // The client sends null for max_queue_time and target_queue_time: the emulator's defaults.
      expect(serverless().endpoint(owner(), endpointId)).toMatchObject({
        name: "llm", minLoad: 500, minColdLoad: 0, targetUtil: 0.9, coldMult: 2.5, coldWorkers: 0, maxWorkers: 1, maxQueueTime: 30, targetQueueTime: 10,
        inactivityTimeout: 600, state: "active",
      });
      // Without --raw: the answer printed as the client's dict.
      const plain = await cli.ok(["create", "endpoint", "--endpoint_name", "spare", "--cold_workers", "0"]);
      const spare = printed(plain, "create endpoint").result;
      expect(serverless().endpoint(owner(), spare)).toMatchObject({ name: "spare", minLoad: 0, coldWorkers: 0, maxWorkers: 20, inactivityTimeout: null });
    });

    it("show endpoints --raw and (table): the endpoints, without their keys", async () => {
      const rows = await cli.raw(["show", "endpoints"]);
      expect(rows.map((r: any) => r.endpoint_name).sort()).toEqual(["llm", "spare"]);
      expect(rows.find((r: any) => r.id === endpointId)).toMatchObject({ min_load: 500, max_workers: 1, cold_workers: 0, endpoint_state: "active", user_id: owner() });
      expect(rows.every((r: any) => !("api_key" in r))).toBe(true);
      const table = await cli.ok(["show", "endpoints"]);
      expect(JSON.parse(table)).toEqual(rows);
    });

    it("create workergroup --template_hash H --endpoint_id ID --search_params S --gpu_ram G: the CLI's filter added; a worker rented for the load", async () => {
      const template = await api("POST", "/api/v0/template/", {
        name: "served", image: "vllm/vllm-openai", env: "-p 8000:8000", runtype: "ssh", ssh_direct: true, onstart: "true", docker_login_repo: "", docker_login_user: "", docker_login_pass: "",
      });
      hash = template.body.template.hash_id;
      const out = await cli.ok(["create", "workergroup", "--template_hash", hash, "--endpoint_id", String(endpointId), "--search_params", "gpu_name=RTX_4090 num_gpus=1", "--gpu_ram", "16"]);
      groupId = printed(out, "workergroup create").id;
      expect(serverless().group(owner(), groupId)).toMatchObject({
        endpointId, templateHash: hash, templateId: null, searchParams: "gpu_name=RTX_4090 num_gpus=1 verified=True rentable=True rented=False", gpuRam: 16, launchArgs: null,
      });
      // min_load 500 asks for one active worker (max_workers 1): rented on the group's criteria.
      const workers = serverless().workersOf({ groupId });
      expect(workers).toHaveLength(1);
      worker = workers[0].instanceId;
      expect(await instance(worker)).toMatchObject({ gpu_name: "RTX 4090", num_gpus: 1, template_hash_id: hash });
      // By endpoint name, on another endpoint: no worker (no load there).
      const other = printed(await cli.ok(["create", "workergroup", "--template_hash", hash, "--endpoint_name", "spare", "-n"]), "workergroup create").id;
      expect(serverless().group(owner(), other)).toMatchObject({ endpointId: serverless().endpointsNamed("spare")[0].id, searchParams: "" });
      expect(serverless().workersOf({ groupId: other })).toEqual([]);
    });

    it("show workergroups --raw and (table)", async () => {
      const rows = await cli.raw(["show", "workergroups"]);
      expect(rows).toHaveLength(2);
      expect(rows.find((r: any) => r.id === groupId)).toMatchObject({
        endpoint_id: endpointId, endpoint_name: "llm", template_hash: hash, gpu_ram: 16, search_params: "gpu_name=RTX_4090 num_gpus=1 verified=True rentable=True rented=False",
        search_query: { gpu_name: { eq: "RTX 4090" }, num_gpus: { eq: 1 }, verified: { eq: true }, rentable: { eq: true }, rented: { eq: false } },
      });
      expect(JSON.parse(await cli.ok(["show", "workergroups"]))).toEqual(rows);
    });

    it("get endpt-workers ID (and --raw): the workers with their state, GPU and measured performance", async () => {
      const workers = await workersOf(endpointId);
      expect(workers.map((w) => w.id)).toEqual([worker]);
      const w = workers[0];
      expect(await cli.ok([...host(), "get", "endpt-workers", String(endpointId)])).toBe(`id=${w.id} status=${w.status} gpu_name=RTX 4090 measured_perf=${w.measured_perf}\n`);
      expect(await cli.raw([...host(), "get", "endpt-workers", String(endpointId)])).toEqual([expect.objectContaining({ id: worker, status: w.status, gpu_name: "RTX 4090" })]);
      const spare = serverless().endpointsNamed("spare")[0].id;
      expect(await cli.ok([...host(), "get", "endpt-workers", String(spare)])).toBe("No workers found.\n");
    });

    it("get endpt-logs ID [--level L] [--tail N] and get wrkgrp-logs ID: the autoscaler's lines", async () => {
      const rented = new RegExp(`^\\S+ worker ${worker} rented \\(creating\\)$`, "m");
      expect(await cli.ok([...host(), "get", "endpt-logs", String(endpointId)])).toMatch(rented);
      expect(await cli.ok([...host(), "get", "endpt-logs", String(endpointId), "--level", "0", "--tail", "1"])).toMatch(rented);
      expect(await cli.ok([...host(), "get", "wrkgrp-logs", String(groupId), "--level", "3"])).toMatch(rented);
      const raw = await cli.raw([...host(), "get", "endpt-logs", String(endpointId), "--tail", "5"]);
      expect(raw.logs).toBe(emu.marketplace.serverlessLogs.text({ endpointId }, 5));
      // Another key than the owner's: refused.
      const refused = await cli.run([...host(), "get", "endpt-logs", String(endpointId)], { key: "not-a-known-key" });
      expect(refused.stderr).toMatch(new RegExp(`Failed with error 401: invalid api_key or endpoint ${endpointId} not found`));
    });

    it("update endpoint ID --max_workers N --endpoint_state S: those changed, the fields sent as null kept", async () => {
      expect(printed(await cli.ok(["update", "endpoint", String(endpointId), "--max_workers", "2", "--endpoint_state", "suspended"]), "update endpoint")).toEqual({ success: true });
      expect(serverless().endpoint(owner(), endpointId)).toMatchObject({ name: "llm", maxWorkers: 2, state: "suspended", minLoad: 500, coldWorkers: 0, inactivityTimeout: 600 });
      expect(await cli.raw(["update", "endpoint", String(endpointId), "--endpoint_state", "active", "--target_util", "0.8"])).toEqual({ success: true });
      expect(serverless().endpoint(owner(), endpointId)).toMatchObject({ state: "active", targetUtil: 0.8, maxWorkers: 2 });
    });

    it("update workergroup ID --gpu_ram G --search_params S: changed in place; without --search_params the CLI's filter alone", async () => {
      expect(printed(await cli.ok(["update", "workergroup", String(groupId), "--gpu_ram", "32", "--search_params", "num_gpus>=1"]), "workergroup update")).toEqual({ success: true });
      expect(serverless().group(owner(), groupId)).toMatchObject({ gpuRam: 32, searchParams: "num_gpus>=1 verified=True rentable=True rented=False", templateHash: hash, endpointId });
      expect(await cli.raw(["update", "workergroup", String(groupId), "--launch_args", "--disk 64"])).toEqual({ success: true });
      expect(serverless().group(owner(), groupId)).toMatchObject({ gpuRam: 32, launchArgs: "--disk 64", searchParams: "verified=True rentable=True rented=False" });
    });

    it("delete workergroup ID: the group and its worker gone", async () => {
      const out = printed(await cli.ok(["delete", "workergroup", String(groupId)]), "workergroup delete");
      expect(out).toMatchObject({ success: true, deleted_workers: [worker], failed_workers: [] });
      expect(serverless().groupsOfOwner(owner()).map((g) => g.id)).not.toContain(groupId);
      expect(serverless().workersOf({ endpointId })).toEqual([]);
      expect(emu.marketplace.instances.all().some((i) => i.id === worker)).toBe(false);
    });

    it("delete endpoint ID: the endpoint and its groups gone", async () => {
      const spare = serverless().endpointsNamed("spare")[0].id;
      for (const id of [endpointId, spare]) {
        expect(printed(await cli.ok(["delete", "endpoint", String(id)]), "delete endpoint")).toMatchObject({ success: true, deleted_workers: [] });
      }
      expect(serverless().endpointsOf(owner())).toEqual([]);
      expect(serverless().groupsOfOwner(owner())).toEqual([]);
      expect(await cli.raw(["show", "endpoints"])).toEqual([]);
    });
  });

  describe("invoices", () => {
    const window = ["-s", "2000-01-01", "-e", "2099-12-31"];

    it("show invoices --raw: charges per instance and the opening credit", async () => {
      const rows = await cli.raw(["show", "invoices", ...window]);
      const charges = rows.filter((r: any) => r.type === "charge");
      expect(charges.length).toBeGreaterThan(0);
      const ledger = emu.marketplace.billing.itemsOf(emu.marketplace.seededUser.id);
      for (const charge of charges) expect(charge.amount).toBeCloseTo(ledger.find((i) => i.instanceId === charge.id)!.amount, 5);
      expect(rows.filter((r: any) => r.type === "payment")).toEqual([expect.objectContaining({ amount: 1000 })]);
      expect(await cli.raw(["show", "invoices", ...window, "--only_credits"])).toHaveLength(1);
      expect(await cli.ok(["show", "invoices", ...window])).toMatch(/Total: \$\d/);
    });

    it("show invoices-v1 --charges --raw and (table)", async () => {
      const page = await cli.raw(["show", "invoices-v1", "--charges", ...window, "--limit", "5"]);
      expect(page).toMatchObject({ count: 5, next_token: "5", results: expect.any(Array) });
      expect(page.total).toBe(emu.marketplace.billing.itemsOf(emu.marketplace.seededUser.id).length);
      expect(page.results.every((r: any) => r.type === "instance" && r.amount > 0)).toBe(true);
      expect(await cli.ok(["show", "invoices-v1", "--charges", ...window, "--no-color", "--limit", "100"])).toContain(`Showing ${page.total} of ${page.total} results`);
    });

    it("show invoices-v1 --invoices --raw and (table)", async () => {
      const page = await cli.raw(["show", "invoices-v1", "--invoices", ...window]);
      expect(page).toMatchObject({ count: 1, total: 1, results: [{ type: "credit", amount: -1000 }] });
      expect(await cli.ok(["show", "invoices-v1", "--invoices", ...window, "--no-color"])).toContain("$1000.00");
    });
  });
});
