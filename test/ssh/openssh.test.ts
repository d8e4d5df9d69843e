import * as fs from "node:fs";
import * as path from "node:path";
import { http, TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, describeWithOpenSsh, homeOf, instance, openssh, registerKey, sshEmulator, sshOptions, userKey } from "./machines";
import { scratch } from "../helpers/paths";

/** Issue 9's first acceptance point, with the clients users have: OpenSSH's `ssh`, `scp` and `sftp`. */
describeWithOpenSsh()("OpenSSH into an emulated instance", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  const login = (view: any, ...command: string[]) =>
    openssh("ssh", [...sshOptions(emu, key.file), "-p", String(view.ssh_port), `root@${view.ssh_host}`, ...command]);

  beforeEach(async () => {
    work = scratch("openssh");
    key = userKey(work.dir);
    emu = await sshEmulator(work.dir);
    await registerKey(emu, key.publicKey);
  });
  afterEach(async () => {
    await emu.close();
    work.remove();
  });

  it("logs in with the account's key and runs a command in the instance's home (/root), with its environment", async () => {
    const id = await createInstance(emu, { env: { MODEL: "llama-3" } });
    const view = await bootToRunning(emu, id);
    expect(view.ssh_host).toBe("127.0.0.1");
    expect(view.ports["22/tcp"]).toEqual([{ HostIp: "127.0.0.1", HostPort: String(view.ssh_port) }]);
    const result = await login(view, 'echo "model=$MODEL instance=$CONTAINER_ID"; pwd; exit 3');
    expect(result.stdout).toBe(`model=llama-3 instance=${id}\n/root\n`);
    expect(result.code).toBe(3);
  });

  it("copies files both ways with scp, whole, and lists them with sftp", async () => {
    const view = await bootToRunning(emu, await createInstance(emu));
    // Several files of many writes each: scp truncates a file to the end of the writes it saw acknowledged in
    // order, so a server that answered them out of order left files short (some 1 in 5 such files, on a busy machine).
    const files = [300_000, 550_000, 800_000, 1_050_000].map((length, n) => {
      const local = path.join(work.dir, `data-${n}.bin`);
      fs.writeFileSync(local, Buffer.from(Array.from({ length }, (_, i) => (i * 7 + n) % 256)));
      return local;
    });
    const target = `root@${view.ssh_host}`;
    const scp = (...args: string[]) => openssh("scp", [...sshOptions(emu, key.file), "-P", String(view.ssh_port), ...args]);
    expect(await scp(...files, `${target}:`)).toMatchObject({ code: 0 });
    const sums = (await login(view, `sha256sum ${files.map((file) => path.basename(file)).join(" ")}`)).stdout.trim().split("\n").map((line) => line.split(" ")[0]);
    expect(sums).toEqual(files.map((file) => require("node:crypto").createHash("sha256").update(fs.readFileSync(file)).digest("hex")));
    await login(view, "mkdir -p out && echo result-42 > out/result.txt");
    const back = path.join(work.dir, "result.txt");
    expect(await scp(`${target}:out/result.txt`, back)).toMatchObject({ code: 0 });
    expect(fs.readFileSync(back, "utf8")).toBe("result-42\n");
    const listing = await openssh("sftp", [...sshOptions(emu, key.file), "-P", String(view.ssh_port), "-b", "-", target], "ls -l out\n");
    expect(listing.code).toBe(0);
    expect(listing.stdout).toMatch(/result\.txt/);
  });

  it("refuses a key the account has not registered, and a password", async () => {
    const view = await bootToRunning(emu, await createInstance(emu));
    const stranger = userKey(work.dir, "stranger");
    const refused = await openssh("ssh", [...sshOptions(emu, stranger.file), "-p", String(view.ssh_port), `root@${view.ssh_host}`, "true"]);
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/Permission denied \(publickey\)/);
  });

  it("takes no connection before running nor after stop; after destroy the machine's folder is gone", async () => {
    const id = await createInstance(emu);
    const loading = await instance(emu, id);
    expect(loading.actual_status).not.toBe("running");
    const early = await login(loading, "true");
    expect(early.code).toBe(255);
    expect(early.stderr).toMatch(/Connection refused/);

    const view = await bootToRunning(emu, id);
    expect(view.ssh_port).toBe(loading.ssh_port);
    expect((await login(view, "touch here")).code).toBe(0);
    expect(fs.existsSync(path.join(await homeOf(emu, id), "here"))).toBe(true);
    const sandbox = path.join(work.dir, "machines", String(id));
    expect(fs.existsSync(sandbox)).toBe(true);

    expect((await http(emu.url, "PUT", `/api/v0/instances/${id}/`, { key: emu.apiKey, body: { state: "stopped" } })).status).toBe(200);
    const stopped = await login(view, "true");
    expect(stopped.code).toBe(255);
    expect(stopped.stderr).toMatch(/Connection refused/);

    expect((await http(emu.url, "DELETE", `/api/v0/instances/${id}/`, { key: emu.apiKey })).status).toBe(200);
    expect(fs.existsSync(sandbox)).toBe(false);
  });
});
