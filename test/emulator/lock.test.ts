import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startEmulator } from "../../emulator";
import { emulatorProcess, EmulatorProcess, killHard } from "../helpers/emulator-process";
import { http } from "../helpers/emulator";
import { scratchFolders } from "../helpers/paths";

/**
 * One emulator per data folder, proven from outside: real processes started at the same moment on a folder
 * whose lock was left by a process killed with SIGKILL, with a pid file naming a live unrelated process.
 */
const tempDir = scratchFolders("lock");
const claims = (dir: string) => fs.readdirSync(dir).filter((file) => /^claim-/.test(file));

it("runs exactly one of two emulators started at once on a folder with a stale lock, 20 times in a row, losing nothing it acknowledged", async () => {
  const dataDir = tempDir();
  const args = ["--data-dir", dataDir, "--api-key", "lock-race-key-1"];
  await killHard(await emulatorProcess(args));
  const acknowledged: { email: string; key: string }[] = [];
  const outcomes: string[] = [];
  for (let trial = 0; trial < 20; trial++) {
    expect(claims(dataDir)).toHaveLength(1); // the stale lock of the emulator killed last
    // An older emulator's pid file naming a live process that is no emulator at all (this test runner).
    fs.writeFileSync(path.join(dataDir, "lock"), String(process.pid));
    const started = await Promise.allSettled([emulatorProcess(args), emulatorProcess(args)]);
    const running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const refused = started.flatMap((s) => (s.status === "rejected" ? [String(s.reason.message)] : []));
    outcomes.push(`${running.length} ran, ${refused.length} refused`);
    expect({ trial, running: running.length }).toEqual({ trial, running: 1 });
    expect(refused[0]).toMatch(new RegExp(`in use by another emulator \\(pid ${running[0].process.pid} .*at ${running[0].url.replace(/[.:/]/g, "\\$&")}.*another --data-dir`));
    const winner: EmulatorProcess = running[0];
    // Everything acknowledged by the winners before is there; then one more write, acknowledged, and SIGKILL.
    for (const { email, key } of acknowledged) expect({ email, status: (await http(winner.url, "GET", "/api/v0/users/current/", { key })).status }).toEqual({ email, status: 200 });
    const email = `trial${trial}@gpu-rental.test`;
    const created = await http(winner.url, "POST", "/_emulator/users", { body: { email } });
    expect(created.status).toBe(200);
    acknowledged.push({ email, key: created.body.api_key });
    await killHard(winner);
  }
  console.log(`lock race: 20 trials of two simultaneous starts on a stale lock: ${outcomes.filter((o) => o === "1 ran, 1 refused").length} with exactly one running; ${acknowledged.length} acknowledged writes, 0 lost`);
}, 120_000);

it("refuses a start on a folder in use, naming the holder and what to do; takes it once the holder stops", async () => {
  const dataDir = tempDir();
  const first = await startEmulator({ dataDir });
  await expect(emulatorProcess(["--data-dir", dataDir])).rejects.toThrow(new RegExp(`in use by another emulator \\(pid ${process.pid} on ${os.hostname()}, at ${first.url}.*stop it, or start this one with another --data-dir`));
  await expect(startEmulator({ dataDir })).rejects.toThrow(/in use by another emulator/);
  await first.close();
  expect(claims(dataDir)).toEqual([]);
  const again = await startEmulator({ dataDir });
  await again.close();
});

it("is not blocked by a lock from another machine, a pid file naming a live process, or files a crash left", async () => {
  const dataDir = tempDir();
  // What a container on another machine leaves in a shared folder: a socket file no process here listens on.
  fs.writeFileSync(path.join(dataDir, "claim-00000000000000aa.sock"), "");
  fs.writeFileSync(path.join(dataDir, "lock"), "1"); // pid 1 is alive, and no emulator
  fs.writeFileSync(path.join(dataDir, "state.json.4242.tmp"), "half a save");
  const emu = await startEmulator({ dataDir });
  expect(fs.readdirSync(dataDir).filter((file) => file.endsWith(".tmp") || file === "lock" || file.includes("00000000000000aa"))).toEqual([]);
  expect(claims(dataDir)).toHaveLength(1);
  await emu.close();
});

it("locks a folder whose path is too long for a unix socket's name", async () => {
  const dataDir = path.join(tempDir(), "a-rather-long-folder-name-".repeat(4), "data");
  expect(dataDir.length).toBeGreaterThan(110);
  const first = await startEmulator({ dataDir });
  await expect(startEmulator({ dataDir })).rejects.toThrow(/in use by another emulator/);
  await first.close();
});

it("gives the folder to exactly one of six claimers started at the same millisecond, 10 rounds", async () => {
  const lockModule = path.join(__dirname, "..", "..", "dist", "emulator", "storage", "lock.js");
  const claimer = `const { acquireDataDirLock } = require(${JSON.stringify(lockModule)});
    const [dir, at] = process.argv.slice(1);
    setTimeout(() => acquireDataDirLock(dir).then(
      () => setTimeout(() => { console.log("HELD " + process.pid); process.exit(0); }, 1500),
      (e) => console.log("REFUSED " + e.message)), Number(at) - Date.now());`;
  for (let round = 0; round < 10; round++) {
    const dataDir = tempDir();
    const at = String(Date.now() + 1200);
    const outputs = await Promise.all(
      Array.from({ length: 6 }, () => new Promise<string>((resolve) => {
        let out = "";
        const child = spawn(process.execPath, ["-e", claimer, dataDir, at]);
        child.stdout.on("data", (chunk) => (out += chunk));
        child.on("exit", () => resolve(out.trim()));
      })),
    );
    const held = outputs.filter((o) => o.startsWith("HELD"));
    expect({ round, held: held.length }).toEqual({ round, held: 1 });
    const holderPid = held[0].split(" ")[1];
    for (const refused of outputs.filter((o) => !o.startsWith("HELD"))) expect(refused).toContain(`in use by another emulator (pid ${holderPid} `);
  }
}, 120_000);
