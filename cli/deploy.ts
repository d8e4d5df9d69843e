import * as crypto from "node:crypto";
import { heldSince, holdingsOf, instanceLogTails, RunningEmulator, startEmulator } from "../emulator";
import { printConnection, untilSignal } from "./emulator";
import { withEphemeralStack } from "./ephemeral";
import { exec, SshError } from "../sdk";
import { demoKey, sshCommandLine, UserKey } from "./ssh-key";

export interface DeployOptions {
  /** The Pulumi project to deploy (the folder holding Pulumi.yaml). */
  programDir: string;
  /** Keep the stack and the emulator up after the deployment (until Ctrl-C). */
  keep: boolean;
  contention: number;
  stack?: string;
  /** Resource operations at once (`pulumi up --parallel`); default one per resource of the program. */
  parallel?: number;
}

const step = (text: string) => console.log(`\n==> ${text}`);

/**
 * Deploys a Pulumi program against the embedded emulator on an ephemeral stack, shows its outputs, then
 * destroys it. The main job (`npm start`) runs it on the root stack.
 */
export async function runDeploy(options: DeployOptions): Promise<void> {
  const started = Date.now();
  step("Starting the embedded emulator");
  // Boot durations are short here so the demo finishes quickly; tests drive them with the emulator's clock.
  // SSH on: the instances' ssh_host/ssh_port answer; the program registers the demo key (stack config sshPublicKey).
  const emulator = await startEmulator({ contention: options.contention, lifecycle: { provisioningMs: 500, loadingMs: 1500 }, ssh: true });
  console.log(`Emulator listening on ${emulator.url}; SSH on 127.0.0.1 only`);
  const before = holdingsOf(emulator.marketplace, emulator.marketplace.seededUser.id);
  const stackName = options.stack ?? `deploy-${crypto.randomBytes(3).toString("hex")}`;
  const env = { GPU_RENTAL_API_URL: emulator.url, GPU_RENTAL_API_KEY: emulator.apiKey };
  try {
    const key = demoKey();
    step(`Preparing the Pulumi toolchain and stack ${stackName} (a private local backend)`);
    const onOutput = (text: string) => process.stdout.write(text);
    const config = { sshPublicKey: key.publicKey };
    await withEphemeralStack({ programDir: options.programDir, stackName, config, env, onOutput, color: "auto" }, async (stack) => {
      const parallel = options.parallel;
      try {
        step("pulumi up");
        try {
          await stack.up({ parallel });
        } catch (error) {
          // What the instances it concerns printed: why a boot or an onstart failed, under the engine's own error.
          const tails = instanceLogTails(emulator.marketplace, [emulator.marketplace.seededUser.id], (error as Error).message ?? "");
          if (tails) console.log(tails);
          throw error;
        }
        step("Result");
        // Secrets are shown as [secret]: decrypted only the SSH outputs the check below reads (if they were secret).
        const outputs = await stack.outputs(["sshHost", "sshPort"]);
        for (const [name, { value, secret }] of Object.entries(outputs)) {
          console.log(`${name}: ${secret ? "[secret]" : typeof value === "string" ? value : JSON.stringify(value)}`);
        }
        await showSsh(emulator, key, outputs);
        const { offersAccepted, offersLostToContention } = emulator.marketplace.stats;
        console.log(`Market: ${offersAccepted} offer(s) accepted, ${offersLostToContention} taken by other tenants first (contention ${options.contention})`);
        if (options.keep) {
          step("Keeping the stack and the emulator up (Ctrl-C destroys the stack and stops)");
          printConnection(emulator);
          console.log(`Open the console in a browser to see what the program did (instances, spend, the market): ${emulator.url}/console`);
          await untilSignal();
        }
      } finally {
        step("pulumi destroy");
        await stack.destroy({ parallel });
      }
    });
  } finally {
    const left = heldSince(before, holdingsOf(emulator.marketplace, emulator.marketplace.seededUser.id));
    const count = Object.values(left).reduce((sum, ids) => sum + ids.length, 0);
    await emulator.close();
    step(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s; left in the emulator: ${count ? JSON.stringify(left) : "nothing"}`);
    if (count > 0) process.exitCode = 1;
  }
}

/**
 * When the program exports `sshHost` and `sshPort`, prints the command that logs in (the demo key, the
 * emulator's host key checked), and runs a command that way to show that it connects.
 */
async function showSsh(emulator: RunningEmulator, key: UserKey, outputs: Record<string, { value: unknown }>): Promise<void> {
  const host = outputs.sshHost?.value;
  const port = outputs.sshPort?.value;
  if (typeof host !== "string" || typeof port !== "number") return;
  step("SSH into the instance");
  console.log(`ssh command: ${sshCommandLine(emulator, key, host, port)}`);
  try {
    const result = await exec({ host, port }, 'echo "connected to instance $CONTAINER_ID as $(whoami), in $PWD"', { privateKey: key.privateKey, hostKey: emulator.ssh?.hostPublicKey, timeoutMs: 30_000 });
    console.log(`ssh check: ${result.stdout.trim() || result.stderr.trim()} (exit ${result.exitCode})`);
  } catch (error) {
    // A program that declares no SshKey of the demo key (stack config sshPublicKey) cannot be logged into with it.
    if (!(error instanceof SshError)) throw error;
    console.log(`ssh check: not logged in (${error.message}); does the program register the key of stack config sshPublicKey?`);
  }
}

