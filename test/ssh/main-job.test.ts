import { spawn } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "../helpers/paths";
import { TRANSPILE_ONLY } from "../helpers/pulumi-stack";
import { describeWithOpenSsh, openssh } from "./machines";

/**
 * The main job (`npm start`, i.e. `gpu-rental deploy` of the root stack) shows an ssh command; the command,
 * run as printed with OpenSSH while the stack is kept up, logs into the instance.
 */
describeWithOpenSsh()("the main job's ssh command", () => {
  it("connects with OpenSSH, and the job then destroys everything", async () => {
    // The root stack's program (examples/instance-from-image) is type-checked by `pretest`, not again by the engine.
    const env = { ...process.env, ...TRANSPILE_ONLY };
    const job = spawn(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "deploy", "--keep"], { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    job.stdout.on("data", (chunk) => (output += chunk));
    job.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => job.on("exit", (code) => resolve(code)));
    try {
      await until(() => /Keeping the stack/.test(output), exited, () => output);
      const command = /^ssh command: (ssh .+)$/m.exec(output)?.[1];
      expect(command).toMatch(/^ssh -i \S+ .* -p \d+ root@127\.0\.0\.1$/);
      expect(output).toMatch(/^ssh check: connected to instance \d+ as .+ \(exit 0\)$/m);
      const args = command!.split(" ").slice(1);
      const login = await openssh("ssh", ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", ...args, "echo logged-in-$CONTAINER_ID"]);
      expect(login.stderr).not.toMatch(/Permission denied|Host key verification failed/);
      expect(login.stdout).toMatch(/^logged-in-\d+\n$/);
      expect(login.code).toBe(0);
    } finally {
      job.kill("SIGINT");
    }
    expect(await exited).toBe(0);
    expect(output).toMatch(/left in the emulator: nothing/);
  }, 300_000);
});

async function until(ready: () => boolean, exited: Promise<number | null>, output: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  while (!ready()) {
    if (gone) throw new Error(`the job ended before keeping the stack up:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
