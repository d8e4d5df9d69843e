import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Clock, Marketplace } from "../../emulator";
import { instanceView } from "../../emulator/http/views/instances";
import { volumeView } from "../../emulator/http/views/volumes";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const PROVISIONING = 2_000;
const LOADING = 5_000;
const HOUR = 3_600_000;

/** Spec: Instance creation fields, Runtype values, Instance, States and transitions, Instance read/stop/destroy. */
describe("instances", () => {
  let emu: TestEmulator;
  const call = (method: string, path: string, body?: unknown) => http(emu.url, method, path, { key: emu.apiKey, body });
  const offers = async (filters: Record<string, unknown> = {}) =>
    (await call("POST", "/api/v0/bundles/", { limit: 1000, order: [["id", "asc"]], ...filters })).body.offers as any[];
  /** An offer nobody holds, taken from the cheap end so tests do not run out. */
  const anOffer = async (filters: Record<string, unknown> = {}) => (await offers(filters))[0];
  const create = async (body: Record<string, unknown>, offerId?: number) => {
    const id = offerId ?? (await anOffer()).id;
    return call("PUT", `/api/v0/asks/${id}/`, body);
  };
  const created = async (body: Record<string, unknown>, offerId?: number) => {
    const res = await create(body, offerId);
    expect(res.status).toBe(200);
    return res.body.new_contract as number;
  };
  const view = async (id: number) => (await call("GET", `/api/v0/instances/${id}/`)).body.instances;
  const status = async (id: number) => (await view(id))?.actual_status;
  const credit = async () => (await call("GET", "/api/v0/users/current/")).body.credit as number;
  const advance = (ms: number) => emu.marketplace.clock.advance(ms);

  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(() => emu.close());

  describe("creation", () => {
    it("answers {success, new_contract, instance_api_key}", async () => {
      const res = await create({ image: "ubuntu:22.04" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, new_contract: expect.any(Number), instance_api_key: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const list = (await call("GET", "/api/v1/instances/")).body;
      expect(list.total_instances).toBe(1);
      expect(list.instances[0].id).toBe(res.body.new_contract);
    });

    it("needs image or template_hash_id", async () => {
      const res = await create({ label: "nothing to run" });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/image or template_hash_id/);
    });

    it("keeps no registry token at rest: only the login's user and registry, from the request or a template", async () => {
      const direct = await created({ image: "ghcr.io/acme/app", image_login: "-u bob -p tok-direct-123 ghcr.io" });
      const template = (await call("POST", "/api/v0/template/", {
        name: "private", image: "ghcr.io/acme/app", docker_login_repo: "registry.acme.test", docker_login_user: "carol",
        docker_login_pass: "tok-template-456",
      })).body.template;
      const fromTemplate = await created({ template_hash_id: template.hash_id });
      expect(await view(direct)).toMatchObject({ docker_login_user: "bob", docker_login_repo: "ghcr.io" });
      expect(await view(fromTemplate)).toMatchObject({ docker_login_user: "carol", docker_login_repo: "registry.acme.test" });
      const records = emu.marketplace.instances.all();
      expect(records.map((r) => r.config.image_login)).toEqual(["-u bob ghcr.io", "-u carol registry.acme.test"]);
      expect(records[0]).not.toHaveProperty("request");
      const saved = JSON.stringify(emu.marketplace.instances.snapshot());
      for (const token of ["tok-direct-123", "tok-template-456"]) expect(saved).not.toContain(token);
    });

    it("reflects every creation field in the instance record", async () => {
      const id = await created({
        image: "pytorch/pytorch:latest", label: "trainer", disk: 40, runtype: "jupyter_direct",
        env: { HF_TOKEN: "x", "-p 7860:7860": "1" }, onstart: "echo hi", use_jupyter_lab: true, jupyter_dir: "/workspace",
        python_utf8: true, lang_utf8: true, image_login: "-u bob -p s3cret ghcr.io", vm: false, cancel_unavail: false,
        client_id: "me", force: false,
      });
      const instance = await view(id);
      expect(instance).toMatchObject({
        id, label: "trainer", disk_space: 40, image_uuid: "pytorch/pytorch:latest", image_runtype: "jupyter_direct",
        onstart: "echo hi", use_jupyter_lab: true, jupyter_dir: "/workspace", python_utf8: true, lang_utf8: true,
        docker_login_user: "bob", docker_login_repo: "ghcr.io", vm: false, is_bid: false, template_hash_id: null,
        intended_status: "running", cur_state: "running", next_state: "running", volume_info: null,
      });
      expect(JSON.stringify(instance)).not.toContain("s3cret");
      expect(instance.extra_env).toEqual(expect.arrayContaining([["HF_TOKEN", "x"], ["LANG", "C.UTF-8"], ["PYTHONIOENCODING", "utf-8"]]));
      expect(instance.extra_env.some(([k]: [string]) => k.startsWith("-p"))).toBe(false);
      expect(Object.keys(instance.ports).sort()).toEqual(["22/tcp", "7860/tcp", "8080/tcp"]);
      for (const field of ["machine_id", "num_gpus", "dph_total", "start_date", "disk_space", "reliability2", "direct_port_start", "direct_port_end"]) {
        expect(typeof instance[field]).toBe("number");
      }
      expect(typeof instance.gpu_name).toBe("string");
      expect(instance.public_ipaddr).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(instance.geolocation).toMatch(/, [A-Z]{2}$/);
      expect(instance.ssh_host).toBe(instance.public_ipaddr);
      expect(instance.ssh_port).toBe(Number(instance.ports["22/tcp"][0].HostPort));
      expect(instance.status_msg).toEqual(expect.any(String));
    });

    it("disk defaults to 8 GB, label to empty, vm to false, and runtype to ssh, or args when given arguments", async () => {
      const instance = await view(await created({ image: "ubuntu" }));
      expect(instance).toMatchObject({ disk_space: 8, image_runtype: "ssh", label: "", vm: false, ssh_host: expect.stringMatching(/proxy/), ports: {} });
      expect(await view(await created({ image: "ubuntu", args_str: "sleep infinity" }))).toMatchObject({ image_runtype: "args", ssh_host: null });
      expect(await view(await created({ image: "ubuntu", args: ["sleep", "infinity"] }))).toMatchObject({ image_runtype: "args", ssh_host: null });
    });

    // Every SSH and Jupyter runtype includes SSH: through the proxy, or straight to the machine (direct).
    const proxied = expect.stringMatching(/proxy/);
    const direct = expect.not.stringMatching(/proxy/);
    it.each([
      ["ssh_direct", ["22/tcp"], direct],
      ["jupyter_direct", ["22/tcp", "8080/tcp"], direct],
      ["ssh_proxy", [], proxied],
      ["ssh", [], proxied],
      ["jupyter_proxy", [], proxied],
      ["jupyter", [], proxied],
      ["args", [], null],
    ])("runtype %s provisions ports %j", async (runtype, ports, sshHost) => {
      const instance = await view(await created({ image: "ubuntu", runtype }));
      expect(Object.keys(instance.ports).sort()).toEqual(ports);
      expect(instance.image_runtype).toBe(runtype);
      expect(instance.ssh_host).toEqual(sshHost);
    });

    it("env keys -p host:container map ports, tcp or udp", async () => {
      const instance = await view(await created({ image: "ubuntu", env: { "-p 8000:8000": "1", "-p 9000:9000/udp": "1", A: "b" } }));
      expect(Object.keys(instance.ports).sort()).toEqual(["8000/tcp", "9000/udp"]);
    });

    it("args_str only with runtype args", async () => {
      expect((await create({ image: "ubuntu", runtype: "ssh", args_str: "sleep 1" })).status).toBe(400);
      const instance = await view(await created({ image: "ubuntu", runtype: "args", args: ["--x"], args_str: "python serve.py" }));
      expect(instance).toMatchObject({ args_str: "python serve.py", image_args: ["--x"] });
    });

    it("target_state stopped creates a stopped instance that bills disk only", async () => {
      const id = await created({ image: "ubuntu", target_state: "stopped" });
      expect(await view(id)).toMatchObject({ actual_status: "exited", cur_state: "stopped", intended_status: "stopped" });
      advance(PROVISIONING + LOADING);
      expect(await status(id)).toBe("exited");
      await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      expect(await status(id)).toBe("loading");
      advance(LOADING);
      expect(await status(id)).toBe("running");
    });

    it("an unknown or rented offer is 404 no_such_ask; with cancel_unavail 410", async () => {
      const missing = await create({ image: "ubuntu" }, 999);
      expect(missing).toMatchObject({ status: 404, body: { error: "no_such_ask", msg: expect.any(String) } });
      const offer = await anOffer();
      await created({ image: "ubuntu" }, offer.id);
      expect((await create({ image: "ubuntu" }, offer.id)).status).toBe(404);
      expect(await create({ image: "ubuntu", cancel_unavail: true }, offer.id)).toMatchObject({ status: 410, body: { error: "no_such_ask" } });
    });
  });

  describe("bids (interruptible instances)", () => {
    it("price makes a bid instance at that price, from a bid search or an on-demand one", async () => {
      const [bidOffer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: bidOffer.min_bid }, bidOffer.id);
      expect(await view(id)).toMatchObject({ is_bid: true, dph_base: bidOffer.min_bid });
      const listed = (await offers()).find((o) => o.min_bid !== null);
      const other = await created({ image: "ubuntu", price: listed.min_bid + 0.01 }, listed.id);
      expect(await view(other)).toMatchObject({ is_bid: true });
    });

    it("a price on an on-demand-only offer is 400 invalid_price", async () => {
      const onDemandOnly = (await offers()).find((o) => o.min_bid === null);
      const res = await create({ image: "ubuntu", price: 10 }, onDemandOnly.id);
      expect(res).toMatchObject({ status: 400, body: { error: "invalid_price" } });
    });

    it("running (interruptible) → stopped when outbid; compute billing halts; start again boots it", async () => {
      const [offer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: offer.min_bid }, offer.id);
      advance(PROVISIONING + LOADING);
      expect(await status(id)).toBe("running");
      const res = await http(emu.url, "POST", `/_emulator/instances/${id}/outbid`, {});
      expect(res).toMatchObject({ status: 200, body: { success: true } });
      expect(await view(id)).toMatchObject({ actual_status: "exited", cur_state: "stopped", status_msg: expect.stringMatching(/[Oo]utbid/) });
      const before = await credit();
      advance(HOUR);
      const storage = (offer.storage_cost * 8) / 730; // the default 8 GB disk, per hour
      expect(before - (await credit())).toBeCloseTo(storage, 4);
      await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      advance(LOADING);
      expect(await status(id)).toBe("running");
    });

    it("an on-demand instance cannot be outbid", async () => {
      const id = await created({ image: "ubuntu" });
      const res = await http(emu.url, "POST", `/_emulator/instances/${id}/outbid`, {});
      expect(res).toMatchObject({ status: 400, body: { error: "not_a_bid" } });
      expect((await http(emu.url, "POST", "/_emulator/instances/1/outbid", {})).status).toBe(404);
    });
  });

  describe("bid change (PUT /api/v0/instances/bid_price/{id}/)", () => {
    const bid = (id: number, price: number | null) => call("PUT", `/api/v0/instances/bid_price/${id}/`, { client_id: "me", price });

    it("bills at the old bid until the change and at the new one after; null bids the offer's minimum", async () => {
      const [offer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: offer.min_bid * 2 }, offer.id);
      advance(PROVISIONING + LOADING);
      const storage = (offer.storage_cost * 8) / 730;
      let before = await credit();
      advance(HOUR);
      expect(before - (await credit())).toBeCloseTo(offer.min_bid * 2 + storage, 4);
      expect(await bid(id, offer.min_bid * 3)).toMatchObject({ status: 200, body: { success: true } });
      expect(await view(id)).toMatchObject({ dph_base: offer.min_bid * 3, is_bid: true, actual_status: "running" });
      before = await credit();
      advance(HOUR);
      expect(before - (await credit())).toBeCloseTo(offer.min_bid * 3 + storage, 4);
      await bid(id, null);
      expect(await view(id)).toMatchObject({ dph_base: offer.min_bid, actual_status: "running" });
    });

    it("a bid below the minimum stops the instance (outbid); a higher one at least the minimum boots it again", async () => {
      const [offer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: offer.min_bid }, offer.id);
      advance(PROVISIONING + LOADING);
      await bid(id, offer.min_bid / 2);
      expect(await view(id)).toMatchObject({ actual_status: "exited", cur_state: "stopped", status_msg: expect.stringMatching(/below the minimum/) });
      await bid(id, offer.min_bid);
      expect(await status(id)).toBe("loading");
      advance(LOADING);
      expect(await status(id)).toBe("running");
      // Outbid by another client: raising the bid wins the machine back.
      await http(emu.url, "POST", `/_emulator/instances/${id}/outbid`, {});
      await bid(id, offer.min_bid * 1.5);
      advance(LOADING);
      expect(await status(id)).toBe("running");
    });

    it("leaves a stopped instance stopped when its bid did not stop it", async () => {
      const [offer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: offer.min_bid }, offer.id);
      advance(PROVISIONING + LOADING);
      await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
      await bid(id, offer.min_bid * 2);
      advance(LOADING);
      expect(await view(id)).toMatchObject({ actual_status: "exited", dph_base: offer.min_bid * 2 });
    });

    it("refuses a bid under 0.001, an on-demand instance, an unknown instance, and a body without client_id", async () => {
      const [offer] = await offers({ type: "bid" });
      const id = await created({ image: "ubuntu", price: offer.min_bid }, offer.id);
      expect(await bid(id, 0)).toMatchObject({ status: 400, body: { error: "invalid_args", msg: "Please set a bid price >= 0.001." } });
      const onDemand = await created({ image: "ubuntu" });
      expect(await bid(onDemand, 1)).toMatchObject({ status: 400, body: { error: "invalid_args", msg: expect.stringMatching(/on-demand/) } });
      expect(await bid(999_999, 1)).toMatchObject({ status: 404, body: { error: "no_such_instance" } });
      expect((await call("PUT", `/api/v0/instances/bid_price/${id}/`, { price: 1 })).status).toBe(400);
      expect((await bid(id, 33)).status).toBe(400); // above the vendor's maximum of 32
      expect(await view(id)).toMatchObject({ dph_base: offer.min_bid });
    });
  });

  describe("reboot and recycle (PUT /api/v0/instances/reboot|recycle/{id}/)", () => {
    const RESTART = 3_000;

    it("rebooting or recycling for a while, then loading, then running; billed throughout", async () => {
      const id = await created({ image: "ubuntu" });
      advance(PROVISIONING + LOADING);
      for (const [how, transient] of [["reboot", "rebooting"], ["recycle", "recycling"]]) {
        expect(await call("PUT", `/api/v0/instances/${how}/${id}/`, {})).toMatchObject({ status: 200, body: { success: true } });
        expect(await view(id)).toMatchObject({ actual_status: transient, cur_state: "running", intended_status: "running" });
        const before = await credit();
        advance(RESTART - 1);
        expect(await status(id)).toBe(transient);
        expect(await credit()).toBeLessThan(before);
        advance(1);
        expect(await status(id)).toBe("loading");
        advance(LOADING);
        expect(await status(id)).toBe("running");
      }
    });

    it("refuses an instance that is not the account's (each with the vendor's code) and one that is not running", async () => {
      expect(await call("PUT", "/api/v0/instances/reboot/999999/", {})).toMatchObject({ status: 400, body: { error: "invalid_args", msg: "invalid instance_id" } });
      expect(await call("PUT", "/api/v0/instances/recycle/999999/", {})).toMatchObject({ status: 400, body: { error: "invalid_id", msg: "Invalid instance id." } });
      const id = await created({ image: "ubuntu" });
      await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
      expect(await call("PUT", `/api/v0/instances/reboot/${id}/`, {})).toMatchObject({ status: 400, body: { error: "invalid_args", msg: expect.stringMatching(/is stopped: only a running instance can be rebooted/) } });
      expect(await status(id)).toBe("exited");
    });
  });

  describe("pending price increases (the host raises a running contract's rate)", () => {
    const raise = async (id: number, factor = 1.5) => (await http(emu.url, "POST", `/_emulator/instances/${id}/price-increase`, { body: { factor } })).body;
    const pending = async () => (await call("GET", "/api/v0/instances/pending-price-increases/")).body;
    const decide = (verb: string, body: unknown) => call("PUT", `/api/v0/instances/${verb}-price-increase/`, body);

    it("lists a raise until it is decided; an accepted rate is charged from the contract's end, a rejected one never", async () => {
      const [accepted, rejected] = [await created({ image: "ubuntu" }), await created({ image: "ubuntu" })];
      advance(PROVISIONING + LOADING);
      const [price, unraised] = [(await view(accepted)).dph_base, (await view(rejected)).dph_base];
      const { pending_price_increase_id: id } = await raise(accepted);
      const { pending_price_increase_id: other } = await raise(rejected);
      const listed = await pending();
      expect(listed).toMatchObject({ success: true, count: 2, truncated: false });
      const row = listed.pending_price_increases.find((r: any) => r.contract_id === accepted);
      expect(row).toMatchObject({ pending_price_increase_id: id, old_gpu_costpersec: expect.closeTo(price / 3600, 9), new_gpu_costpersec: expect.closeTo((price * 1.5) / 3600, 9) });
      expect(row.ask_end_date).toBeGreaterThan(row.contract_end_date);
      expect(await decide("accept", { pending_price_increase_id: id })).toMatchObject({ status: 200, body: { success: true, pending_price_increase_id: id, contract_id: accepted } });
      expect(await decide("reject", { pending_price_increase_id: other })).toMatchObject({ status: 200, body: { contract_id: rejected } });
      expect((await pending()).pending_price_increases).toEqual([]);
      // The old rate up to the contract's end, the new one after it (read when billing settles: at a read).
      const rate = async (id: number) => (await view(id)).dph_base;
      advance(row.contract_end_date * 1000 - emu.marketplace.clock.now() - HOUR);
      expect(await rate(accepted)).toBe(price);
      expect(await rate(rejected)).toBe(unraised);
      await call("DELETE", `/api/v0/instances/${rejected}/`, {});
      const { storage_cost, disk_space } = await view(accepted);
      const before = await credit();
      advance(2 * HOUR);
      expect(await rate(accepted)).toBeCloseTo(price * 1.5, 6);
      // An hour at each rate, and the disk throughout.
      expect(before - (await credit())).toBeCloseTo(price + price * 1.5 + (2 * storage_cost * disk_space) / 730, 6);
    });

    it("refuses a raise decided already or not the account's (404 no_pending_price_increase) and a body with another key (400)", async () => {
      const id = await created({ image: "ubuntu" });
      const { pending_price_increase_id: raised } = await raise(id);
      expect((await decide("accept", { pending_price_increase_id: raised, instance_id: id })).status).toBe(400);
      const stranger = emu.account("stranger@price.test");
      expect(await http(emu.url, "PUT", "/api/v0/instances/accept-price-increase/", { key: stranger.key, body: { pending_price_increase_id: raised } })).toMatchObject({
        status: 404, body: { success: false, error: "no_pending_price_increase" },
      });
      await decide("reject", { pending_price_increase_id: raised });
      expect(await decide("accept", { pending_price_increase_id: raised })).toMatchObject({ status: 404, body: { error: "no_pending_price_increase" } });
    });
  });

  describe("states and transitions (controllable clock)", () => {
    it("(none) → null → loading → running", async () => {
      const id = await created({ image: "ubuntu" });
      expect(await status(id)).toBeNull();
      advance(PROVISIONING - 1);
      expect(await status(id)).toBeNull();
      advance(1);
      expect(await status(id)).toBe("loading");
      advance(LOADING - 1);
      expect(await status(id)).toBe("loading");
      advance(1);
      expect(await status(id)).toBe("running");
      expect(await view(id)).toMatchObject({ intended_status: "running", cur_state: "running", status_msg: "success, running" });
    });

    it("running → stopped on a stop request (reported exited, cur_state stopped) → start → loading → running", async () => {
      const id = await created({ image: "ubuntu" });
      advance(PROVISIONING + LOADING);
      expect(await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" })).toMatchObject({ status: 200, body: { success: true } });
      expect(await view(id)).toMatchObject({ actual_status: "exited", cur_state: "stopped", intended_status: "stopped" });
      advance(HOUR);
      expect(await status(id)).toBe("exited");
      await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      expect(await status(id)).toBe("loading"); // a restart skips provisioning
      advance(LOADING);
      expect(await status(id)).toBe("running");
    });

    it("null and loading can be stopped too", async () => {
      const a = await created({ image: "ubuntu" });
      await call("PUT", `/api/v0/instances/${a}/`, { state: "stopped" });
      expect(await status(a)).toBe("exited");
      const b = await created({ image: "ubuntu" });
      advance(PROVISIONING);
      expect(await status(b)).toBe("loading");
      await call("PUT", `/api/v0/instances/${b}/`, { state: "stopped" });
      expect(await status(b)).toBe("exited");
    });

    it("any state → removed on destroy: gone from listings at once, GET answers {instances: null}", async () => {
      for (const wait of [0, PROVISIONING, PROVISIONING + LOADING]) {
        const id = await created({ image: "ubuntu" });
        advance(wait);
        expect(await call("DELETE", `/api/v0/instances/${id}/`, {})).toMatchObject({ status: 200, body: { success: true } });
        expect(await call("GET", `/api/v0/instances/${id}/`)).toMatchObject({ status: 200, body: { instances: null } });
        expect((await call("GET", "/api/v1/instances/")).body.instances.some((i: any) => i.id === id)).toBe(false);
      }
    });

    it.each(["exited", "unknown", "offline"])("a %s instance never reaches running; it cannot be started; it can be destroyed", async (failure) => {
      const id = await created({ image: "ubuntu" });
      advance(PROVISIONING);
      expect((await http(emu.url, "POST", `/_emulator/instances/${id}/fail`, { body: { status: failure, msg: "boom" } })).status).toBe(200);
      expect(await view(id)).toMatchObject({ actual_status: failure, status_msg: "boom" });
      advance(10 * HOUR);
      expect(await status(id)).toBe(failure);
      const start = await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      expect(start.status).toBe(200); // already intended running: nothing to do
      await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
      const restart = await call("PUT", `/api/v0/instances/${id}/`, { state: "running" });
      expect(restart).toMatchObject({ status: 400, body: { msg: expect.stringMatching(/cannot be started/) } });
      expect(await status(id)).toBe(failure);
      expect((await call("DELETE", `/api/v0/instances/${id}/`, {})).status).toBe(200);
    });

    it("relabels with {label}", async () => {
      const id = await created({ image: "ubuntu", label: "a" });
      await call("PUT", `/api/v0/instances/${id}/`, { label: "b" });
      expect((await view(id)).label).toBe("b");
    });
  });

  describe("billing (controllable clock)", () => {
    it("running bills compute and disk; stopped bills disk only; destroyed bills nothing", async () => {
      const offer = await anOffer();
      const id = await created({ image: "ubuntu", disk: 100 }, offer.id);
      const storage = (offer.storage_cost * 100) / 730;
      const compute = offer.dph_base;
      expect((await view(id)).dph_total).toBeCloseTo(compute + storage, 5);
      let before = await credit();
      advance(HOUR);
      expect(before - (await credit())).toBeCloseTo(compute + storage, 5);
      await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
      before = await credit();
      advance(2 * HOUR);
      expect(before - (await credit())).toBeCloseTo(2 * storage, 5);
      await call("DELETE", `/api/v0/instances/${id}/`, {});
      before = await credit();
      advance(5 * HOUR);
      expect(await credit()).toBe(before);
    });

    it("a bid instance bills its bid; each instance accrues on its own", async () => {
      const [a, b] = await offers({ type: "bid" });
      const bid = Number((a.min_bid * 1.5).toFixed(4));
      await created({ image: "ubuntu", price: bid }, a.id);
      await created({ image: "ubuntu" }, b.id);
      const before = await credit();
      advance(HOUR);
      const storage = (o: any) => (o.storage_cost * 8) / 730;
      // b is on-demand: its compute price is the listed one, not the bid view's.
      const listedB = emu.marketplace.market.offer(b.id)!;
      expect(before - (await credit())).toBeCloseTo(bid + storage(a) + listedB.dph_base! + storage(listedB), 4);
    });
  });

  describe("instance API key", () => {
    it("starts, stops and destroys its own instance only", async () => {
      const res = await create({ image: "ubuntu" });
      const { new_contract: id, instance_api_key: key } = res.body;
      const other = await created({ image: "ubuntu" });
      expect((await http(emu.url, "PUT", `/api/v0/instances/${id}/`, { key, body: { state: "stopped" } })).status).toBe(200);
      expect((await http(emu.url, "PUT", `/api/v0/instances/${other}/`, { key, body: { state: "stopped" } })).status).toBe(403);
      expect((await http(emu.url, "GET", "/api/v1/instances/", { key })).status).toBe(403);
      expect((await http(emu.url, "DELETE", `/api/v0/instances/${id}/`, { key, body: {} })).status).toBe(200);
    });
  });
});

describe("persistence of market, instances, templates and volumes", () => {
  it("snapshot → JSON → restore gives the same state", async () => {
    const emu = await emulator();
    try {
      const client = emu.client();
      const template = await client.templates.create({ name: "t", image: "ubuntu", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
      const [volumeOffer] = await client.volumes.searchNetworkOffers({ limit: 1 });
      const volume = await client.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 10 });
      const [offer] = await client.offers.search({ limit: 1 });
      const { new_contract } = await client.instances.create(offer.id, {
        template_hash_id: template.hash_id, volume_info: { create_new: false, volume_id: volume.id, mount_path: "/data" },
      });
      emu.marketplace.clock.advance(PROVISIONING);
      const source = emu.marketplace;
      const parts = { market: source.market, instances: source.instances, templates: source.templates, volumes: source.volumes };
      const saved = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(parts).map(([k, p]) => [k, p.snapshot()]))));

      // The offers are not saved: they come from the seed and the offer count of this start (and its clock).
      const copy = new Marketplace({ clock: new Clock("frozen"), offers: source.market.size });
      copy.market.restore(saved.market);
      copy.instances.restore(saved.instances);
      copy.templates.restore(saved.templates);
      copy.volumes.restore(saved.volumes);
      const now = source.clock.now();
      const views = (m: Marketplace) => m.instances.all().map((i) => instanceView(i, now, m.lifecycle));
      expect(views(copy)).toEqual(views(source));
      expect(copy.searchOffers({ limit: 1000 })).toEqual(source.searchOffers({ limit: 1000 }));
      expect(copy.templates.search(source.seededUser.id, {})).toEqual(source.templates.search(source.seededUser.id, {}));
      expect(copy.volumes.list(source.seededUser.id).map((v) => volumeView(v))).toEqual(
        source.volumes.list(source.seededUser.id).map((v) => volumeView(v)),
      );
      expect(copy.volumes.searchNetworkOffers({ limit: 100 })).toEqual(source.volumes.searchNetworkOffers({ limit: 100 }));
      // Identifiers continue where they stopped, and the restored instance still bills.
      expect(copy.instances.snapshot().nextId).toBe(new_contract + 1);
      expect(JSON.parse(JSON.stringify(copy.instances.snapshot()))).toEqual(saved.instances);
    } finally {
      await emu.close();
    }
  });

  it("the market is saved as the offers held and a check of its catalogue, not as every offer", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-market-"));
    try {
      const emu = await emulator({ dataDir, offers: 2000 });
      const offerId = (await emu.client().offers.search({ limit: 1 }))[0].id;
      const { new_contract } = await emu.client().instances.create(offerId, { image: "ubuntu" });
      const market = JSON.parse(JSON.stringify(emu.marketplace.snapshot().parts.market));
      await emu.close();
      expect(market).not.toHaveProperty("offers");
      expect(market.held).toEqual([[offerId, { kind: "instance", instanceId: new_contract }]]);
      expect(market.catalogue).toMatchObject({ count: 2000, firstId: 10000, lastId: 11999 });
      expect(JSON.stringify(market).length).toBeLessThan(1000);
      // The whole save, not megabytes of offers (2000 offers listed would be over 2 MB).
      expect(fs.statSync(path.join(dataDir, "state.json")).size).toBeLessThan(200_000);

      // The same start again: the offer is still rented, and the state reports the market's size.
      const again = await emulator({ dataDir, offers: 2000 });
      try {
        expect((await again.client().offers.search({ filters: { id: { eq: offerId } } }))).toHaveLength(0);
        expect((await http(again.url, "GET", "/_emulator/state")).body.offers_on_market).toBe(1999);
      } finally {
        await again.close();
      }
      // Another market is refused, not restored onto offers the save was not made with.
      await expect(emulator({ dataDir, offers: 500 })).rejects.toThrow(/this data dir was made with --offers 2000\b.*--offers 500/);
      await expect(emulator({ dataDir, offers: 2000, seed: 7 })).rejects.toThrow(/this data dir was made with --offers 2000\b.*--seed/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("emulator state", () => {
  it("offers_on_market counts every offer on the market, beyond the largest search", async () => {
    const emu = await emulator({ offers: 1500 });
    try {
      const client = emu.client();
      await client.instances.create((await client.offers.search({ limit: 1 }))[0].id, { image: "ubuntu" });
      expect((await http(emu.url, "GET", "/_emulator/state")).body.offers_on_market).toBe(1499);
    } finally {
      await emu.close();
    }
  });
});

/** emulator/INSTANCES.md, "The live service's moves": one test per row, the move and its switch back. */
describe("the live service's moves", () => {
  const DEPRECATED = { success: false, error: "deprecated_endpoint", msg: "/api/v0/instances/ is deprecated. Use /api/v1/instances/ instead." };

  it("GET /api/v0/instances/ answers the deprecation, with or without ?owner=me; legacyInstanceListing serves the old listing", async () => {
    const live = await emulator();
    const legacy = await emulator({ legacyInstanceListing: true });
    try {
      for (const emu of [live, legacy]) {
        const [offer] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1 } })).body.offers;
        expect((await http(emu.url, "PUT", `/api/v0/asks/${offer.id}/`, { key: emu.apiKey, body: { image: "x" } })).status).toBe(200);
      }
      for (const path of ["/api/v0/instances/", "/api/v0/instances/?owner=me", "/api/v0/instances"]) {
        const res = await http(live.url, "GET", path, { key: live.apiKey });
        expect({ status: res.status, body: res.body, type: res.headers.get("content-type") }).toEqual({ status: 410, body: DEPRECATED, type: "application/json" });
        expect(await http(legacy.url, "GET", path, { key: legacy.apiKey })).toMatchObject({ status: 200, body: { instances_found: 1, instances: [expect.any(Object)] } });
      }
      // The v1 listing and the single-instance read did not move.
      expect((await http(live.url, "GET", "/api/v1/instances/", { key: live.apiKey })).body).toMatchObject({ total_instances: 1 });
    } finally {
      await live.close();
      await legacy.close();
    }
  });

  it("a fault answers the deprecation body at any status, 200 included", async () => {
    const emu = await emulator();
    try {
      emu.faults.add({ path: "/api/v1/instances/", kind: "deprecated", status: 200, times: 1 });
      const res = await http(emu.url, "GET", "/api/v1/instances/", { key: emu.apiKey });
      expect(res).toMatchObject({ status: 200, body: { success: false, error: "deprecated_endpoint", msg: "/api/v1/instances/ is deprecated." } });
      expect((await http(emu.url, "GET", "/api/v1/instances/", { key: emu.apiKey })).body).toMatchObject({ instances: [] });
    } finally {
      await emu.close();
    }
  });
});
