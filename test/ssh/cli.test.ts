import { spawn } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "../helpers/provider-host";

/** `gpu-rental emulator --ssh` serves SSH, and says that it serves it on loopback only. */
it("gpu-rental emulator --ssh says it serves SSH on 127.0.0.1 only, and stops on Ctrl-C", async () => {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "emulator", "--ssh"], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/Control API/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  child.kill("SIGINT");
  expect(await exited).toBe(0);
  expect(output).toMatch(/^SSH: instances are served on 127\.0\.0\.1 only \(loopback\), host key \S+ssh_host_ed25519_key; their processes run as this user, in \S+/m);
}, 60_000);
