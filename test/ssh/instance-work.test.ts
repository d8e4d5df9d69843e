import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { instanceLogTails } from "../../emulator";
import { Steps } from "../../cli/steps";
import { BadRequestError, copyFrom, copyTo, NotFoundError } from "../../sdk";
import { http, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT, scratch } from "../helpers/paths";
import { bootToRunning, createInstance, homeOf, registerKey, sshEmulator, userKey } from "./machines";

/**
 * The SDK's methods for the service's work on instances' machines: logs and allowed commands (answered by URL),
 * copies between machines and with this computer (the service answers where, the SDK copies over SFTP), and
 * cloud copies, each observed in the machines' files and the emulator's record of its copies.
 */
describe("the SDK: logs, commands and copies on emulated machines", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  let a: number;
  let b: number;
  const client = () => emu.client();
  const transfers = async () => (await http(emu.url, "GET", "/_emulator/transfers")).body.transfers as any[];
  const settled = async () => {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 25))) {
      const last = (await transfers()).at(-1);
      if (last.state !== "running") return last;
    }
    throw new Error("the copy is still running");
  };

  beforeAll(async () => {
    work = scratch("instance-work");
    key = userKey(work.dir);
    emu = await sshEmulator(work.dir);
    await registerKey(emu, key.publicKey);
    [a, b] = [await createInstance(emu, { onstart: "mkdir -p out && echo result-1 > out/r.txt && echo started-ok" }), await createInstance(emu)];
    await Promise.all([bootToRunning(emu, a), bootToRunning(emu, b)]);
  }, 120_000);
  afterAll(async () => {
    await emu?.close();
    work?.remove();
  });

  it("logs: the machine's output, the last lines asked for; an unknown instance is a NotFoundError", async () => {
    expect(await client().instances.logs(a)).toBe("started-ok\n");
    expect(await client().instances.logs(a, { daemon: true })).toMatch(/container started: running\n$/);
    await expect(client().instances.logs(999999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("execute: an allowed command's output; another is a BadRequestError and runs nothing", async () => {
    expect(await client().instances.execute(a, "ls /root/out")).toBe("r.txt\n");
    await expect(client().instances.execute(a, "touch /root/out/x")).rejects.toBeInstanceOf(BadRequestError);
    expect(fs.readdirSync(path.join(await homeOf(emu, a), "out"))).toEqual(["r.txt"]);
  });

  it("copies: between two instances; with this computer, the address the SDK then copies to and from over SFTP", async () => {
    await client().copies.start({ instanceId: a, path: "/root/out" }, { instanceId: b, path: "/root/got" });
    expect(await settled()).toMatchObject({ kind: "copy", srcId: a, dstId: b, state: "done" });
    expect(fs.readFileSync(path.join(await homeOf(emu, b), "got", "out", "r.txt"), "utf8")).toBe("result-1\n");

    const local = path.join(work.dir, "up.txt");
    fs.writeFileSync(local, "from this computer\n");
    const up = await client().copies.start({ path: local }, { instanceId: b, path: "/root/up.txt" });
    expect(up).toMatchObject({ success: true, dst_addr: expect.any(String), dst_port: expect.any(Number) });
    const ssh = { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey };
    await copyTo({ host: up.dst_addr!, port: up.dst_port! }, local, "/root/up.txt", ssh);
    expect(fs.readFileSync(path.join(await homeOf(emu, b), "up.txt"), "utf8")).toBe("from this computer\n");
    const down = await client().copies.start({ instanceId: a, path: "/root/out/r.txt" }, { path: path.join(work.dir, "r.txt") });
    await copyFrom({ host: down.src_addr!, port: down.src_port! }, "/root/out/r.txt", path.join(work.dir, "r.txt"), ssh);
    expect(fs.readFileSync(path.join(work.dir, "r.txt"), "utf8")).toBe("result-1\n");
  });

  it("cloud copies: the account's connection, to it and back; a dry run copies nothing", async () => {
    const made = (await http(emu.url, "POST", "/_emulator/cloud-connections", { body: { name: "bucket", cloud_type: "b2" } })).body;
    expect(await client().cloudCopies.connections()).toEqual([{ id: made.id, name: "bucket", cloud_type: "b2" }]);
    await client().cloudCopies.start({ instanceId: a, connectionId: made.id, direction: "toCloud", instancePath: "/root/out/", cloudPath: "/run1" });
    expect(await settled()).toMatchObject({ kind: "sync", state: "done" });
    expect(fs.readFileSync(path.join(made.folder, "run1", "r.txt"), "utf8")).toBe("result-1\n");
    await client().cloudCopies.start({ instanceId: b, connectionId: made.id, direction: "fromCloud", instancePath: "/root/back", cloudPath: "/run1/" });
    expect(await settled()).toMatchObject({ state: "done" });
    expect(fs.readFileSync(path.join(await homeOf(emu, b), "back", "r.txt"), "utf8")).toBe("result-1\n");
    await client().cloudCopies.start({ instanceId: a, connectionId: made.id, direction: "toCloud", instancePath: "/root/out/", cloudPath: "/dry", dryRun: true });
    expect(fs.existsSync(path.join(made.folder, "dry"))).toBe(false);
    await client().cloudCopies.cancel(a);
  });

  it("gpu-rental logs ID prints the instance's logs (the account from the environment); --tail the last lines", async () => {
    const cli = async (...args: string[]) =>
      (await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), ...args], {
        env: { ...process.env, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey },
        timeout: 60_000,
      })).stdout;
    expect(await cli("logs", String(a))).toBe("started-ok\n");
    expect(await cli("logs", String(a), "--daemon", "--tail", "1")).toMatch(/^\S+ (cloud copy|copy|execute|container)[^\n]*\n$/);
  });

  it("a failure's report carries the tail of the logs of the instances it names, or else of those that failed", async () => {
    const broken = await createInstance(emu, { onstart: "echo loading weights; echo CUDA error: out of memory >&2; exit 3" });
    await bootToRunning(emu, broken);
    const user = [emu.marketplace.seededUser.id];
    const named = instanceLogTails(emu.marketplace, user, `output url: instance ${broken} did not answer`);
    expect(named).toContain(`logs of instance ${broken} (running)`);
    expect(named).toContain("loading weights\n  CUDA error: out of memory");
    expect(instanceLogTails(emu.marketplace, user, "up failed")).toBe("");
    await http(emu.url, "POST", `/_emulator/instances/${broken}/fail`, { body: { status: "exited", msg: "the container exited (3)" } });
    const failed = instanceLogTails(emu.marketplace, user, "up failed: waiting for running");
    expect(failed).toContain(`logs of instance ${broken} (exited: the container exited (3))`);
    expect(failed).toContain("CUDA error: out of memory");
    expect(failed).not.toContain(`instance ${a} `);
    // As gpu-rental test reports a failed step: the step's message, then those logs.
    const steps = new Steps(() => undefined, (message) => instanceLogTails(emu.marketplace, user, message));
    await steps.run("output url", async () => {
      throw new Error(`instance ${broken} is not serving`);
    });
    expect(steps.results[0].message).toMatch(new RegExp(`^instance ${broken} is not serving\\nlogs of instance ${broken} .*CUDA error: out of memory`, "s"));
  });
});
