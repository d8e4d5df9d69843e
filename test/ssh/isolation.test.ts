import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { copyTo, exec } from "../../sdk";
import { ed25519KeyPair } from "../../emulator";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, homeOf, registerKey, sshEmulator, userKey } from "./machines";
import { scratch, scratchFolders } from "../helpers/paths";
import { EmulatorProcess, emulatorProcess } from "../helpers/emulator-process";

/**
 * Issue 61: an emulated machine's processes have a root filesystem and namespaces of their own
 * (emulator/sandbox/machine-space.ts): what they write is theirs, and this computer, its processes and the other
 * machines are out of their reach. Real machines, real processes, as root, as CI runs; then as another user of this
 * computer (a laptop's), and where the kernel refuses user namespaces.
 */

const folder = scratchFolders("isolation");

/** This computer's files and other users are root's to change: the tests that do are root's, as CI runs them. */
const AS_ROOT = process.getuid?.() === 0;
const describeAsRoot = AS_ROOT ? describe : describe.skip;
if (!AS_ROOT) console.warn("Not root: the tests that change this computer's system folders or run an emulator as another user are skipped.");

/** Lines `<what> ok|failed` of what a script tried. */
const tried = (what: string, command: string) => `if ${command}; then echo "${what} ok"; else echo "${what} failed"; fi`;
const lines = (text: string) => Object.fromEntries(text.trim().split("\n").map((line) => line.split(/ (?=\S+$)/)));

describeAsRoot("a machine's own root, as root runs the emulator", () => {
  let emu: TestEmulator;
  let key: ReturnType<typeof userKey>;
  let dir: string;
  const run = (view: any, command: string) => exec(view, command, { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey, timeoutMs: 30_000 });
  // This computer's files a machine tries to change: made by the test, removed after it.
  const victims = ["/opt/gpu-rental-isolation-victim", "/usr/local/bin/gpu-rental-isolation-victim"];
  const made = ["/etc/gpu-rental-isolation.conf", "/opt/gpu-rental-isolation", "/usr/local/bin/gpu-rental-isolation", "/root/gpu-rental-isolation"];

  beforeAll(async () => {
    dir = folder();
    key = userKey(dir);
    emu = await sshEmulator(dir);
    await registerKey(emu, key.publicKey);
    for (const victim of victims) fs.writeFileSync(victim, "this computer's\n");
  });
  afterAll(async () => {
    await emu?.close();
    for (const file of [...victims, ...made]) fs.rmSync(file, { recursive: true, force: true });
  });

  it("takes an onstart's writes and deletions under /etc, /usr, /opt and /root into its own root, and no kill, read or listing of this computer's processes nor of another machine's files", async () => {
    const victim = spawn("sleep", ["300"], { stdio: "ignore" });
    try {
      const other = await createInstance(emu, { onstart: "echo a-secret > /root/secret.txt" });
      await bootToRunning(emu, other);
      const otherHome = await homeOf(emu, other);
      const otherFolder = path.join(dir, "machines", String(other));
      const script = [
        tried("etc-write", "echo mine > /etc/gpu-rental-isolation.conf"),
        tried("etc-delete", "rm -rf /etc/security/limits.d && [ ! -e /etc/security/limits.d ]"),
        tried("opt-write", "mkdir -p /opt/gpu-rental-isolation && echo tool > /opt/gpu-rental-isolation/tool"),
        tried("opt-delete", `rm ${victims[0]}`),
        tried("usr-write", "echo mine > /usr/local/bin/gpu-rental-isolation"),
        tried("usr-delete", `rm ${victims[1]}`),
        tried("root-write", "echo mine > /root/gpu-rental-isolation"),
        tried("kill", `kill -9 ${victim.pid} 2> /dev/null`),
        tried("read-other", `cat ${otherHome}/secret.txt 2> /dev/null || cat ${otherFolder}/disk.tar 2> /dev/null || ls ${otherFolder} 2> /dev/null`),
        tried("write-other", `echo theirs > ${otherHome}/secret.txt 2> /dev/null`),
        `echo "processes $(ps -e -o comm= | sort -u | tr '\\n' ,)"`,
      ].join("\n");
      const id = await createInstance(emu, { onstart: script });
      const view = await bootToRunning(emu, id);
      const report = lines((await http(emu.url, "GET", `/_emulator/instances/${id}/machine`)).body.onstart.output);
      expect(report).toMatchObject({
        "etc-write": "ok", "etc-delete": "ok", "opt-write": "ok", "opt-delete": "ok", "usr-write": "ok", "usr-delete": "ok", "root-write": "ok",
        kill: "failed", "read-other": "failed", "write-other": "failed",
      });
      // Its own processes only: its first, onstart's shell and ps.
      expect(report.processes.split(",").filter(Boolean).sort()).toEqual(["bash", "ps", "sort", "tr"].sort());

      // Inside, what it did stays done.
      const inside = await run(view, `cat /etc/gpu-rental-isolation.conf /opt/gpu-rental-isolation/tool /usr/local/bin/gpu-rental-isolation /root/gpu-rental-isolation; ls /etc/security/limits.d ${victims.join(" ")} 2>&1 | wc -l`);
      expect(inside.stdout).toBe("mine\ntool\nmine\nmine\n3\n");
      // This computer: unchanged, its process alive; the other machine's file its own.
      for (const file of made) expect(fs.existsSync(file)).toBe(false);
      for (const file of victims) expect(fs.readFileSync(file, "utf8")).toBe("this computer's\n");
      expect(fs.statSync("/etc/security/limits.d").isDirectory()).toBe(true);
      expect(victim.exitCode).toBeNull();
      expect(fs.readFileSync(path.join(await homeOf(emu, other), "secret.txt"), "utf8")).toBe("a-secret\n");
    } finally {
      victim.kill("SIGKILL");
    }
  });

  it("lets apt-style and pip --user-style setups install under /usr/local, /etc and ~/.local, and run what they installed, this computer untouched", async () => {
    const onstart = [
      "set -e",
      "printf '#!/bin/sh\\necho fake-tool-ran\\n' > /usr/local/bin/gpu-rental-fake-tool && chmod +x /usr/local/bin/gpu-rental-fake-tool",
      "mkdir -p /usr/local/share/gpu-rental-fake && echo data > /usr/local/share/gpu-rental-fake/data",
      "echo 'deb http://deb.example.invalid stable main' > /etc/apt/sources.list.d/gpu-rental-fake.list",
      'site=$(python3 -m site --user-site) && mkdir -p "$site/gpu_rental_userpkg" && echo \'VALUE = "user-site"\' > "$site/gpu_rental_userpkg/__init__.py"',
      "mkdir -p ~/.local/bin && printf '#!/bin/sh\\necho user-tool-ran\\n' > ~/.local/bin/gpu-rental-user-tool && chmod +x ~/.local/bin/gpu-rental-user-tool",
    ].join("\n");
    const view = await bootToRunning(emu, await createInstance(emu, { onstart }));
    const used = await run(view, "gpu-rental-fake-tool; python3 -c 'import gpu_rental_userpkg as p; print(p.VALUE)'; ~/.local/bin/gpu-rental-user-tool; cat /etc/apt/sources.list.d/gpu-rental-fake.list");
    expect(used.stdout).toBe("fake-tool-ran\nuser-site\nuser-tool-ran\ndeb http://deb.example.invalid stable main\n");
    const hostUserSite = spawnSync("python3", ["-m", "site", "--user-site"], { encoding: "utf8" }).stdout.trim();
    for (const file of ["/usr/local/bin/gpu-rental-fake-tool", "/usr/local/share/gpu-rental-fake", "/etc/apt/sources.list.d/gpu-rental-fake.list", path.join(hostUserSite, "gpu_rental_userpkg"), path.join(os.homedir(), ".local", "bin", "gpu-rental-user-tool")]) {
      expect(fs.existsSync(file)).toBe(false);
    }
  });

  it("bounds its files by the instance's disk (a write past it fails as a full disk does), and keeps them across a stop", async () => {
    // 0.05 GB: a disk of 52 MiB.
    const onstart = "dd if=/dev/zero of=/root/big bs=1M count=80 2>&1 | head -1; rm /root/big; dd if=/dev/zero of=/usr/local/kept bs=1M count=8 2> /dev/null; echo boot >> /root/boots";
    const id = await createInstance(emu, { disk: 0.05, onstart });
    const view = await bootToRunning(emu, id);
    expect((await http(emu.url, "GET", `/_emulator/instances/${id}/machine`)).body.onstart.output).toMatch(/No space left on device/);
    expect((await run(view, "df -m / | tail -1 | awk '{ print $2 }'")).stdout).toBe("52\n");
    for (const state of ["stopped", "running"]) await http(emu.url, "PUT", `/api/v0/instances/${id}/`, { key: emu.apiKey, body: { state } });
    const again = await bootToRunning(emu, id);
    expect((await run(again, "wc -c < /usr/local/kept; cat /root/boots")).stdout).toBe(`${8 << 20}\nboot\nboot\n`);
  });
});

describeAsRoot("the emulator's own folders, where they lie in a system folder a machine sees", () => {
  it("are covered: a machine sees none of its own nor another machine's folder there, and writes nothing there", async () => {
    // Deep in /usr/share/doc, where the machines' base layer takes no folder: the test leaves it as it was.
    const place = fs.mkdtempSync("/usr/share/doc/gpu-rental-isolation-");
    // Readable by everyone, as a system folder is: only the cover keeps the machines out.
    fs.chmodSync(place, 0o755);
    const work = scratch("isolation-covered");
    const key = userKey(work.dir);
    const emu = await emulator({ ssh: { sandboxes: path.join(place, "machines"), hostKeyFile: path.join(work.dir, "host", "key") } });
    try {
      await registerKey(emu, key.publicKey);
      const other = await createInstance(emu, { onstart: "echo theirs > /root/secret.txt" });
      await bootToRunning(emu, other);
      const view = await bootToRunning(emu, await createInstance(emu));
      expect(fs.readdirSync(path.join(place, "machines")).length).toBeGreaterThan(1);
      const seen = await exec(view, `ls -A ${place}; ls -A ${place}/machines | wc -l; touch ${place}/machines/mine 2>&1`, { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey });
      expect(seen.stdout).toMatch(/^machines\n0\ntouch: cannot touch .*Read-only file system\n$/);
    } finally {
      await emu.close();
      work.remove();
      fs.rmSync(place, { recursive: true, force: true });
    }
  });
});

describeAsRoot("the user's cache in a system folder (a service account's home in /var)", () => {
  it("keeps the machines' base layer elsewhere: overlayfs refuses a lower layer inside another", async () => {
    // Deep in /usr/share/doc, where the machines' base layer takes no folder: the test leaves it as it was.
    const place = fs.mkdtempSync("/usr/share/doc/gpu-rental-isolation-cache-");
    const fallback = path.join(os.tmpdir(), `gpu-rental-machine-base-${process.getuid!()}`);
    const work = scratch("isolation-cache");
    const key = userKey(work.dir);
    const cache = process.env.GPU_RENTAL_CACHE;
    process.env.GPU_RENTAL_CACHE = place;
    const emu = await sshEmulator(work.dir);
    try {
      await registerKey(emu, key.publicKey);
      const view = await bootToRunning(emu, await createInstance(emu, { onstart: "echo mine > /etc/gpu-rental-cache.conf" }));
      expect((await exec(view, "cat /etc/gpu-rental-cache.conf", { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey })).stdout).toBe("mine\n");
      expect(fs.readdirSync(place)).toEqual([]);
      expect(fs.existsSync(fallback)).toBe(true);
    } finally {
      if (cache === undefined) delete process.env.GPU_RENTAL_CACHE;
      else process.env.GPU_RENTAL_CACHE = cache;
      await emu.close();
      work.remove();
      // Nothing left in the temporary folder by the run: only this test's emulator took the layer there.
      for (const made of [place, fallback]) fs.rmSync(made, { recursive: true, force: true });
    }
  });
});

describe("a machine's files with --data-dir", () => {
  it("are kept across the emulator's restarts, as its disk would be", async () => {
    const work = scratch("isolation-data");
    const key = userKey(work.dir);
    const options = { dataDir: path.join(work.dir, "data"), ssh: { hostKeyFile: path.join(work.dir, "host", "key") } };
    let emu = await emulator(options);
    try {
      await registerKey(emu, key.publicKey);
      const id = await createInstance(emu);
      const view = await bootToRunning(emu, id);
      await exec(view, "echo kept > /root/notes; echo kept > /etc/gpu-rental-notes", { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey });
      await emu.close();
      emu = await emulator(options);
      const again = await bootToRunning(emu, id);
      expect((await exec(again, "cat /root/notes /etc/gpu-rental-notes", { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey })).stdout).toBe("kept\nkept\n");
    } finally {
      await emu.close();
      work.remove();
    }
  });
});

/**
 * `gpu-rental emulator` (the built command) in a process of its own, as this computer's `uid` (a laptop's user):
 * its machines' root is that user. `refuse` runs it in a user namespace where no further one may be made, as a
 * kernel that refuses them does.
 */
async function emulatorAs(uid: number, options: { refuse?: boolean } = {}): Promise<EmulatorProcess & { work: string; hostPublicKey: string }> {
  const work = folder();
  fs.chmodSync(work, 0o755);
  fs.mkdirSync(path.join(work, "home"));
  spawnSync("chown", ["-R", `${uid}:${uid}`, work]);
  const asUser = ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--"];
  // A user namespace mapping root and the user as they are; once mapped, it allows no namespace of its own.
  const refusing = ["unshare", "--user", "--", "/bin/sh", "-c", `read go && exec /bin/sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' sh "$@"`, "sh"];
  const mapped = (child: ChildProcess) => {
    // Written once unshare has made the namespace (its shell waits on its input meanwhile).
    setTimeout(() => {
      fs.writeFileSync(`/proc/${child.pid}/uid_map`, `0 0 1\n${uid} ${uid} 1\n`);
      fs.writeFileSync(`/proc/${child.pid}/gid_map`, `0 0 1\n${uid} ${uid} 1\n`);
      child.stdin!.write("go\n");
    }, 200);
  };
  const dataDir = path.join(work, "data");
  const env = { HOME: path.join(work, "home"), GPU_RENTAL_CACHE: path.join(work, "home", "cache") };
  const launch = options.refuse ? { through: [...refusing, ...asUser], started: mapped } : { through: asUser };
  const emu = await emulatorProcess(["--data-dir", dataDir, "--provisioning-ms", "0", "--loading-ms", "0"], env, launch);
  return Object.assign(emu, { work, hostPublicKey: fs.readFileSync(path.join(dataDir, "ssh_host_ed25519_key.pub"), "utf8").trim() });
}

/** Calls an emulator of another process as its seeded user. */
const callOn = (emu: EmulatorProcess) => async (method: string, url: string, body?: unknown) => (await http(emu.url, method, url, { key: emu.apiKey, body })).body;

/** Rents an SSH instance running `onstart` on an emulator of another process; resolves with its view once `status`. */
async function rentOn(emu: EmulatorProcess, onstart: string, status: "running" | "exited"): Promise<any> {
  const call = callOn(emu);
  const [offer] = (await call("POST", "/api/v0/bundles/", { limit: 1 })).offers;
  const id = (await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu:22.04", runtype: "ssh_direct", onstart })).new_contract;
  let view: any;
  for (let polls = 0; view?.actual_status !== status && polls < 400; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    view = (await call("GET", `/api/v0/instances/${id}/`)).instances;
  }
  return view;
}

describeAsRoot("a machine's own root, as another user of this computer runs the emulator (a laptop's)", () => {
  it("is that user's root: writes under /etc and /usr/local are its own, SSH and SFTP work, nothing of this computer changes", async () => {
    const uid = 1000 + (process.pid % 1000);
    const emu = await emulatorAs(uid);
    try {
      const made = ed25519KeyPair("laptop");
      const call = callOn(emu);
      await call("POST", "/api/v0/ssh/", { ssh_key: made.public });
      const view = await rentOn(emu, "echo mine > /etc/gpu-rental-laptop.conf; touch /usr/local/bin/gpu-rental-laptop", "running");
      const id = view.id;
      const ssh = { privateKey: made.private, hostKey: emu.hostPublicKey };
      const inside = await exec(view, "id -u; cat /etc/gpu-rental-laptop.conf; ls /usr/local/bin/gpu-rental-laptop", ssh);
      expect(inside.stdout).toBe("0\nmine\n/usr/local/bin/gpu-rental-laptop\n");
      const local = path.join(emu.work, "copied.txt");
      fs.writeFileSync(local, "over sftp\n");
      await copyTo(view, local, "/tmp/copied.txt", ssh);
      expect((await exec(view, "cat /tmp/copied.txt", ssh)).stdout).toBe("over sftp\n");
      // The machine's files are the user's on this computer, kept in its folder at a stop.
      await call("PUT", `/api/v0/instances/${id}/`, { state: "stopped" });
      const packed = path.join(emu.work, "data", "machines", String(id), "disk.tar");
      for (let polls = 0; !fs.existsSync(packed) && polls < 200; polls++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(fs.statSync(packed).uid).toBe(uid);
      for (const file of ["/etc/gpu-rental-laptop.conf", "/usr/local/bin/gpu-rental-laptop"]) expect(fs.existsSync(file)).toBe(false);
    } finally {
      await emu.stop();
    }
  });
});

describeAsRoot("where the kernel refuses user namespaces", () => {
  it("says why in the machines' status, and each machine's instance reports exited with the reason", async () => {
    const emu = await emulatorAs(1000 + (process.pid % 1000) + 1, { refuse: true });
    try {
      expect((await http(emu.url, "GET", "/_emulator/machines")).body.isolation_why).toMatch(/refuses the user namespaces .*No space left on device/);
      await emu.waitFor(/The emulated machines cannot run here: this computer refuses the user namespaces/);
      const view = await rentOn(emu, "touch /etc/never", "exited");
      expect(view).toMatchObject({ actual_status: "exited", status_msg: expect.stringMatching(/^The emulated machine could not boot: this computer refuses the user namespaces/) });
      expect(view.status_msg).toContain("max_user_namespaces");
    } finally {
      await emu.stop();
    }
  });
});
