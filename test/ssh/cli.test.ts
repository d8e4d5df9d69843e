import { spawn, spawnSync } from "node:child_process";
import * as path from "node:path";
import { emulatorProcess } from "../helpers/emulator-process";
import { http } from "../helpers/emulator";
import { REPO_ROOT, scratch } from "../helpers/paths";
import { describeWithOpenSsh, userKey } from "./machines";

/**
 * `gpu-rental emulator --ssh` serves SSH, and says that it serves it on loopback only; and, its machines made to
 * share this computer's network (GPU_RENTAL_NO_NETNS), that they do.
 */
it("gpu-rental emulator --ssh says it serves SSH on 127.0.0.1 only, and where its machines share this computer's network; stops on Ctrl-C", async () => {
  const env = { ...process.env, GPU_RENTAL_NO_NETNS: "1" };
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "emulator", "--ssh"], { stdio: ["ignore", "pipe", "pipe"], env });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/Control API/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  child.kill("SIGINT");
  expect(await exited).toBe(0);
  expect(output).toMatch(/^SSH: instances are served on 127\.0\.0\.1 only \(loopback\), host key \S+ssh_host_ed25519_key; each runs in a machine of its own \(Linux namespaces\), its files in \S+/m);
  expect(output).toMatch(/^Machines share this computer's network: GPU_RENTAL_NO_NETNS is set\. Their published ports lead to the container ports on this computer, so two instances serving one port collide\.$/m);
}, 60_000);

/**
 * `gpu-rental emulator --ssh-key FILE` (SSH is the default): the key's public half is registered on the seeded
 * account, and each instance's ssh command line is printed as it comes up, ready to run as printed (the emulator's
 * known_hosts in it). `--account-key` makes another account with that key; `--no-ssh` says what will not happen.
 */
describeWithOpenSsh()("gpu-rental emulator --ssh-key, --account-key, --no-ssh", () => {
  let work: ReturnType<typeof scratch>;
  beforeAll(() => (work = scratch("emulator-cli")));
  afterAll(() => work.remove());

  it("prints each instance's ssh line, which logs in as printed; the other account's key works", async () => {
    const key = userKey(work.dir);
    const emu = await emulatorProcess(["--ssh-key", key.file, "--account-key", "team-dev-key-1", "--provisioning-ms", "0", "--loading-ms", "0"]);
    try {
      const [offer] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1 } })).body.offers;
      const created = await http(emu.url, "PUT", `/api/v0/asks/${offer.id}/`, { key: emu.apiKey, body: { image: "ubuntu", runtype: "ssh_direct" } });
      const id = created.body.new_contract;
      const line = await emu.waitFor(new RegExp(`^Instance ${id} is up; log in with: (ssh .*)$`, "m"));
      expect(line[1]).toMatch(new RegExp(`^ssh -i ${key.file} -o IdentitiesOnly=yes -o UserKnownHostsFile=\\S+known_hosts -p \\d+ root@127\\.0\\.0\\.1$`));
      const login = spawnSync("bash", ["-c", `${line[1]} -o BatchMode=yes 'echo "in $CONTAINER_ID"'`], { encoding: "utf8", timeout: 30_000 });
      expect(login.stderr).not.toMatch(/Host key verification failed|Permission denied/);
      expect(login.stdout).toBe(`in ${id}\n`);
      expect((await http(emu.url, "GET", "/api/v0/users/current/", { key: "team-dev-key-1" })).status).toBe(200);
      expect((await http(emu.url, "GET", "/_emulator/machines")).body).toMatchObject({ onstart: true });
    } finally {
      await emu.stop();
    }
  }, 60_000);

  it("--no-ssh says at start that onstart will not run, and the control API says why", async () => {
    const emu = await emulatorProcess(["--no-ssh"]);
    try {
      await emu.waitFor(/No emulated machines: the emulator was started without its machines \(--no-ssh\)\. Instances' onstart will not run, so maxLifetime and idleTimeout will not end them/);
      expect((await http(emu.url, "GET", "/_emulator/machines")).body).toEqual({ onstart: false, why: "the emulator was started without its machines (--no-ssh)" });
    } finally {
      await emu.stop();
    }
  });
});
