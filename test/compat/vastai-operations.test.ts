import * as fs from "node:fs";
import * as path from "node:path";
import { http, TestEmulator } from "../helpers/emulator";
import { scratch } from "../helpers/paths";
import { findPython } from "../helpers/python";
import { VastaiCli, VASTAI_REQUIREMENTS } from "../helpers/vastai";
import { bootToRunning, createInstance, homeOf, sshEmulator } from "../ssh/machines";

/**
 * The service's operations on instances' machines and the account, as the public Python client (unchanged) calls
 * them against an emulator with machines: each command's effect observed in the emulator's state (the machines'
 * files, the copies it ran, the credit and deposits), and bad input refused with nothing done.
 */
const python = findPython();
const skipped = "missing" in python ? ` (skipped: ${python.missing})` : "";
if (skipped) console.warn(`test/compat/vastai-operations.test.ts${skipped}`);

(skipped ? describe.skip : describe)(`the public Python client (${VASTAI_REQUIREMENTS.join(", ")}): operations on instances and the account${skipped}`, () => {
  let emu: TestEmulator;
  let cli: VastaiCli;
  let work: ReturnType<typeof scratch>;
  /** Two running instances: `a` has /root/data/a.txt and /root/notes.txt from its onstart. */
  let a: number;
  let b: number;
  const api = (method: string, url: string, body?: unknown) => http(emu.url, method, url, { key: emu.apiKey, body });
  const transfers = async () => (await http(emu.url, "GET", "/_emulator/transfers")).body.transfers as any[];
  const credit = () => emu.marketplace.seededUser.credit;
  /** Waits (real time: the copies are real processes) until the transfer is no longer running. */
  const settled = async (id: number) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = (await transfers()).find((t) => t.id === id);
      if (found && found.state !== "running") return found;
      if (Date.now() > deadline) throw new Error(`transfer ${id} still running: ${JSON.stringify(found)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  const lastTransfer = async () => (await transfers()).at(-1);

  beforeAll(async () => {
    work = scratch("vastai-operations");
    emu = await sshEmulator(work.dir);
    cli = await VastaiCli.install(python as Exclude<typeof python, { missing: string }>, emu.url, emu.apiKey);
    const onstart = "mkdir -p data && echo alpha > data/a.txt && echo notes > notes.txt && echo hello-from-onstart && truncate -s 8G /root/big";
    [a, b] = [await createInstance(emu, { onstart }), await createInstance(emu, {})];
    await Promise.all([bootToRunning(emu, a), bootToRunning(emu, b)]);
  }, 15 * 60_000);
  afterAll(async () => {
    cli?.close();
    await emu?.close();
    work?.remove();
  });

  describe("logs", () => {
    it("logs ID prints what the machine printed (onstart); --tail and --filter select lines", async () => {
      expect(await cli.ok(["logs", String(a)])).toContain("hello-from-onstart");
      const daemon = await cli.ok(["logs", String(a), "--daemon-logs"]);
      expect(daemon).toContain("container started: running");
      expect(await cli.ok(["logs", String(a), "--filter", "no-such-line"])).not.toContain("hello");
    });

    it("an unknown instance: 404 invalid_id, and no result made", async () => {
      const res = await api("PUT", "/api/v0/instances/request_logs/999999/", {});
      expect([res.status, res.body.error]).toEqual([404, "invalid_id"]);
    });
  });

  describe("execute", () => {
    // The client's API, as its `execute` command calls it: 1.9.1's command then reads the text as a dict and fails
    // on any answer with a result_url, as the description's is (docs/service-facts.md#instance-logs-and-commands).
    const execute = (command: string) => cli.pythonApi(`print(vast.execute(${a}, ${JSON.stringify(command)}), end="")`);

    it("execute ID 'ls -a /root' lists the machine's home; 'rm' removes a file there; 'du' sizes", async () => {
      const listing = await execute("ls -a /root");
      expect(listing).toContain("notes.txt");
      expect(listing).toContain("data");
      await execute("rm /root/notes.txt");
      expect(fs.existsSync(path.join(await homeOf(emu, a), "notes.txt"))).toBe(false);
      expect(await execute("du -s /root/data")).toMatch(/\d+\s+\/root\/data/);
      // The command itself, as a user types it: the client fails after the call (its own bug), the call was made.
      const typed = await cli.run(["execute", String(a), "ls /root"]);
      expect(typed.stdout + typed.stderr).toContain("AttributeError: 'str' object has no attribute 'get'");
    });

    it("a command not allowed, or with shell syntax, is refused with the service's error; nothing runs", async () => {
      for (const command of ["cat /etc/passwd", "ls; touch /root/pwned", "ls $(touch /root/pwned)"]) {
        const res = await api("PUT", `/api/v0/instances/command/${a}/`, { command });
        expect([res.status, res.body.error]).toEqual([400, "invalid_args"]);
      }
      expect(fs.existsSync(path.join(await homeOf(emu, a), "pwned"))).toBe(false);
      const unknown = await api("PUT", "/api/v0/instances/command/999999/", { command: "ls" });
      expect([unknown.status, unknown.body.error]).toEqual([400, "invalid_container_id"]);
    });
  });

  describe("copy", () => {
    it("copy A:/root/data/ B:/root/in/ copies the folder's contents between the two machines", async () => {
      const out = await cli.ok(["copy", `${a}:/root/data/`, `C.${b}:/root/in/`]);
      expect(out).toContain("Remote to Remote copy initiated");
      const transfer = await settled((await lastTransfer()).id);
      expect(transfer).toMatchObject({ kind: "copy", srcId: a, dstId: b, state: "done" });
      expect(fs.readFileSync(path.join(await homeOf(emu, b), "in", "a.txt"), "utf8")).toBe("alpha\n");
    });

    it("cancel copy B ends a copy running into B", async () => {
      await api("PUT", "/api/v0/commands/copy_direct/", { client_id: "me", src_id: a, dst_id: b, src_path: "/root/big", dst_path: "/root/huge/" });
      const running = await lastTransfer();
      expect(running.state).toBe("running");
      expect(await cli.ok(["cancel", "copy", String(b)])).toContain("Remote copy canceled");
      expect(await settled(running.id)).toMatchObject({ state: "canceled" });
    });

    it("a copy to an instance that is stopped, or unknown, is refused, and no copy starts", async () => {
      const stopped = await createInstance(emu, { target_state: "stopped" });
      const before = (await transfers()).length;
      const res = await api("PUT", "/api/v0/commands/copy_direct/", { client_id: "me", src_id: a, dst_id: stopped, src_path: "/root/data/", dst_path: "/root/in/" });
      expect([res.status, res.body.error]).toEqual([400, "invalid_args"]);
      const unknown = await api("PUT", "/api/v0/commands/copy_direct/", { client_id: "me", src_id: a, dst_id: 999999, src_path: "/root/data/", dst_path: "/root/in/" });
      expect(unknown.status).toBe(404);
      expect((await transfers()).length).toBe(before);
    });
  });

  describe("cloud copy", () => {
    let connection: { id: number; folder: string };
    beforeAll(async () => {
      connection = (await http(emu.url, "POST", "/_emulator/cloud-connections", { body: { name: "backups", cloud_type: "s3" } })).body;
    });

    it("show connections lists the account's connection", async () => {
      expect(await cli.raw(["show", "connections"])).toEqual([{ id: connection.id, name: "backups", cloud_type: "s3" }]);
    });

    it("cloud copy Instance To Cloud, then Cloud To Instance: the bucket's folder, then the other machine, hold the files", async () => {
      await cli.ok(["cloud", "copy", "--src", "/root/data", "--dst", "/saved", "--instance", String(a), "--connection", String(connection.id), "--transfer", "Instance To Cloud"]);
      expect(await settled((await lastTransfer()).id)).toMatchObject({ kind: "sync", state: "done" });
      expect(fs.readFileSync(path.join(connection.folder, "saved", "data", "a.txt"), "utf8")).toBe("alpha\n");
      await cli.ok(["cloud", "copy", "--src", "/saved/data/", "--dst", "/root/restored", "--instance", String(b), "--connection", String(connection.id), "--transfer", "Cloud To Instance"]);
      expect(await settled((await lastTransfer()).id)).toMatchObject({ kind: "sync", dstId: b, state: "done" });
      expect(fs.readFileSync(path.join(await homeOf(emu, b), "restored", "a.txt"), "utf8")).toBe("alpha\n");
    });

    it("cancel sync ID ends a cloud copy running out of the instance", async () => {
      await api("POST", "/api/v0/commands/rclone/", { instance_id: String(a), src: "/root/big", dst: "/big", selected: String(connection.id), transfer: "Instance To Cloud", flags: [] });
      const running = await lastTransfer();
      expect(running.state).toBe("running");
      expect(await cli.ok(["cancel", "sync", String(a)])).toContain("Remote copy canceled");
      expect(await settled(running.id)).toMatchObject({ state: "canceled" });
    });

    it("an unknown connection is refused (404) and nothing is copied", async () => {
      const res = await api("POST", "/api/v0/commands/rclone/", { instance_id: String(a), src: "/root/data", dst: "/x", selected: "424242", transfer: "Instance To Cloud" });
      expect([res.status, res.body.error]).toEqual([404, "no_such_connection"]);
      expect(fs.existsSync(path.join(connection.folder, "x"))).toBe(false);
    });
  });

  describe("prepay and deposit", () => {
    it("prepay instance ID 50 moves credit into the deposit; show deposit shows it; billing draws on it first", async () => {
      const before = credit();
      expect(await cli.ok(["prepay", "instance", String(b), "50"])).toMatch(/prepaid for [\d.]+ months of instance \d+ applying \$50(\.0)? credits/);
      expect(credit()).toBeCloseTo(before - 50, 6);
      const deposit = JSON.parse(await cli.ok(["show", "deposit", String(b)]));
      expect(deposit).toMatchObject({ refundable_deposit: 50, discount_months: expect.any(Number) });
      // An hour of B comes out of its deposit, discounted; the credit pays what the other instances cost, not B.
      const view = emu.marketplace.instances.byId(b)!;
      const charged = () => {
        const sums: Record<string, number> = {};
        for (const item of emu.marketplace.billing.itemsOf(emu.marketplace.seededUser.id)) sums[String(item.instanceId)] = (sums[String(item.instanceId)] ?? 0) + item.amount;
        return sums;
      };
      emu.marketplace.settle();
      const [creditBefore, chargedBefore] = [credit(), charged()];
      emu.marketplace.clock.advance(3_600_000);
      const after = JSON.parse(await cli.ok(["show", "deposit", String(b)]));
      const drawn = 50 - after.refundable_deposit;
      expect(drawn).toBeGreaterThanOrEqual(view.pricePerHour * (1 - view.deposit!.discountRate) - 1e-6);
      // What the credit paid this hour: every instance's charge but B's.
      const chargedAfter = charged();
      const others = Object.keys(chargedAfter).filter((id) => Number(id) !== b).reduce((sum, id) => sum + chargedAfter[id] - (chargedBefore[id] ?? 0), 0);
      expect(creditBefore - credit()).toBeCloseTo(others, 6);
      expect(chargedAfter[b] - chargedBefore[b]).toBeGreaterThan(0);
    });

    it("a prepayment above the credit is refused with 411 Insufficient credit; the credit and deposit stay", async () => {
      const before = credit();
      const res = await api("PUT", `/api/v0/instances/prepay/${a}/`, { amount: before + 1 });
      expect([res.status, res.body.msg]).toEqual([411, "Insufficient credit"]);
      expect(credit()).toBe(before);
      expect((await api("GET", `/api/v0/instances/balance/${a}/`)).body.refundable_deposit).toBe(0);
      const unknown = await api("PUT", "/api/v0/instances/prepay/999999/", { amount: 1 });
      expect([unknown.status, unknown.body.msg]).toEqual([400, "No such instance"]);
    });
  });

  describe("account", () => {
    it("transfer credit EMAIL AMOUNT --skip moves credit to that account; more than the credit, or no such account, is refused and nothing moves", async () => {
      const other = emu.account("friend@example.test");
      const recipient = emu.marketplace.accounts.user(other.id)!;
      const [mine, theirs] = [credit(), recipient.credit];
      expect(await cli.ok(["transfer", "credit", "friend@example.test", "12.5", "--skip"])).toContain("Sent 12.5 to friend@example.test");
      expect([credit(), recipient.credit]).toEqual([mine - 12.5, theirs + 12.5]);
      const tooMuch = await api("PUT", "/api/v0/commands/transfer_credit/", { sender: "me", recipient: String(other.id), amount: credit() + 1 });
      expect([tooMuch.status, tooMuch.body.error]).toEqual([400, "insufficient_balance"]);
      const nobody = await api("PUT", "/api/v0/commands/transfer_credit/", { sender: "me", recipient: "nobody@example.test", amount: 1 });
      expect([nobody.status, nobody.body.error]).toEqual([400, "invalid_recipient"]);
      expect([credit(), recipient.credit]).toEqual([mine - 12.5, theirs + 12.5]);
    });

    it("set user --file sets the account's details; an unknown field is refused (nonexistent_key) and nothing is set", async () => {
      const file = path.join(work.dir, "user.json");
      fs.writeFileSync(file, JSON.stringify({ fullname: "Ada Lovelace", billaddress_city: "London" }));
      expect(await cli.ok(["set", "user", "--file", file])).toContain("'success': True");
      expect(await cli.raw(["show", "user"])).toMatchObject({ fullname: "Ada Lovelace" });
      expect(emu.marketplace.seededUser.settings).toMatchObject({ billaddress_city: "London" });
      const res = await api("PUT", "/api/v0/users/", { fullname: "Someone Else", favourite_colour: "blue" });
      expect([res.status, res.body.error]).toEqual([400, "nonexistent_key"]);
      expect(emu.marketplace.seededUser.fullName).toBe("Ada Lovelace");
    });

    it("show ipaddrs --raw: the addresses the account's keys were used from", async () => {
      const rows = await cli.raw(["show", "ipaddrs"]);
      expect(rows).toEqual([expect.objectContaining({ ip: "127.0.0.1", ip_address: "127.0.0.1", first_seen: expect.any(Number) })]);
    });

    it("show audit-logs --raw: the account's changes, newest first, with the key and the fields sent (not their values)", async () => {
      const rows = await cli.raw(["show", "audit-logs"]);
      const setUser = rows.find((r: any) => r.api_route === "PUT /api/v0/users/");
      expect(setUser).toMatchObject({ ip_address: "127.0.0.1", api_key_id: expect.any(Number), created_at: expect.any(Number) });
      expect(JSON.parse(setUser.args)).toEqual({ fields: ["billaddress_city", "fullname"] });
      expect(JSON.stringify(rows)).not.toContain("Ada Lovelace");
      expect(rows.some((r: any) => r.api_route === "PUT /api/v0/instances/prepay/{id}/")).toBe(true);
      expect(rows.map((r: any) => r.created_at)).toEqual([...rows.map((r: any) => r.created_at)].sort((x: number, y: number) => y - x));
    });

    it("search benchmarks 'gpu_name=RTX_4090' --raw: one per machine of the market, filtered as asked", async () => {
      const rows = await cli.raw(["search", "benchmarks", "gpu_name=RTX_4090"]);
      const machines = [...emu.marketplace.market.allOffers()].filter((o) => o.gpu_name === "RTX 4090");
      expect(rows.map((r: any) => r.machine_id).sort()).toEqual(machines.map((o) => o.machine_id).sort());
      expect(rows.every((r: any) => r.gpu_name === "RTX 4090" && typeof r.value === "number")).toBe(true);
    });
  });
});
