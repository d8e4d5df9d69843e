import * as path from "node:path";
import { startEmulator } from "../emulator";
import { pulumi, PulumiWorkspace } from "./pulumi";
import { ensureToolchain, PACKAGE_ROOT } from "./toolchain";
import { printConnection, untilSignal } from "./emulator";

export interface DeployOptions {
  /** Keep the stack and the emulator up after the deployment (until Ctrl-C). */
  keep: boolean;
  contention: number;
  stack: string;
}

const step = (text: string) => console.log(`\n==> ${text}`);

/**
 * The main job: prepares the Pulumi toolchain, starts the embedded emulator, deploys the root stack with the
 * real engine, shows the outputs, then destroys the stack and stops the emulator.
 */
export async function runDeploy(options: DeployOptions): Promise<void> {
  const started = Date.now();
  step("Preparing the Pulumi toolchain");
  const toolchainBin = ensureToolchain();

  step("Starting the embedded emulator");
  // Boot durations are short here so the demo finishes quickly; tests drive them with the emulator's clock.
  const emulator = await startEmulator({ contention: options.contention, lifecycle: { provisioningMs: 500, loadingMs: 1500 } });
  console.log(`Emulator listening on ${emulator.url}`);
  const ws: PulumiWorkspace = {
    toolchainBin,
    projectDir: PACKAGE_ROOT,
    stateDir: path.join(PACKAGE_ROOT, ".gpu-rental", "main-job"),
  };
  const stack = ["--stack", options.stack];
  let deployed = false;
  try {
    step(`Creating stack ${options.stack} (local file backend in ${path.relative(process.cwd(), ws.stateDir) || "."})`);
    await pulumi(ws, ["stack", "select", "--create", options.stack]);
    await pulumi(ws, ["config", "set", ...stack, "gpu-rental:apiUrl", emulator.url]);
    // The key goes in through stdin, so it never shows in a process listing; it is stored encrypted.
    await pulumi(ws, ["config", "set", ...stack, "--secret", "gpu-rental:apiKey"], { input: emulator.apiKey });

    step("pulumi up");
    deployed = true;
    await pulumi(ws, ["up", ...stack, "--yes"], { echo: true });
    const outputs = JSON.parse(await pulumi(ws, ["stack", "output", ...stack, "--json"]));
    step("Result");
    console.log(`Instance ${outputs.instanceId}: ${outputs.gpuName} x${outputs.numGpus} at $${outputs.pricePerHour}/hour, ${outputs.status}`);
    console.log(`SSH: ${outputs.sshCommand}   (host ${outputs.sshHost}, port ${outputs.sshPort})`);
    const { offersAccepted, offersLostToContention } = emulator.marketplace.stats;
    console.log(`Market: ${offersAccepted} offer(s) accepted, ${offersLostToContention} taken by other tenants first (contention ${options.contention})`);

    if (options.keep) {
      step("Keeping the stack and the emulator up (Ctrl-C destroys the stack and stops)");
      printConnection(emulator);
      await untilSignal();
    }
  } finally {
    if (deployed) {
      step("pulumi destroy");
      await pulumi(ws, ["destroy", ...stack, "--yes"], { echo: true }).catch((error) => console.error(String(error)));
    }
    await pulumi(ws, ["stack", "rm", ...stack, "--yes", "--force"]).catch(() => undefined);
    const left = emulator.marketplace.instances.all().length;
    await emulator.close();
    step(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s; instances left in the emulator: ${left}`);
    if (left > 0) process.exitCode = 1;
  }
}
