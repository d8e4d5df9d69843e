import { startEmulator, EmulatorOptions, RunningEmulator, SSH_HOST } from "../emulator";

/**
 * `gpu-rental emulator`: runs the emulator in the foreground until interrupted, or until the process that started
 * it is gone. `npx gpu-rental emulator &` runs it under npm and a shell, and `kill %1` stops npm alone: without
 * this the emulator would live on unseen, holding its port.
 */
export async function runEmulatorCommand(options: EmulatorOptions): Promise<void> {
  const emulator = await startEmulator(options);
  printConnection(emulator);
  const control = options.controlApi === false ? "off" : `${emulator.url}/_emulator/state${options.controlToken ? " (send the token in X-Emulator-Token)" : ""}`;
  console.log("Control API: %s (Ctrl-C stops the emulator)", control);
  if (options.legacyInstanceListing) console.log("GET /api/v0/instances/ answers as before the live service retired it (--legacy-instance-listing)");
  const reason = await Promise.race([untilSignal(), untilOrphaned()]);
  if (reason === "orphaned") console.log("The process that started the emulator is gone: stopping.");
  await emulator.close();
}

/** Resolves when this process's parent has exited (it is then adopted by another, and its parent id changes). */
function untilOrphaned(): Promise<"orphaned"> {
  const parent = process.ppid;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(timer);
        resolve("orphaned");
      }
    }, 500);
    // The server keeps the process alive while it runs; this watch must not once it is closed.
    timer.unref();
  });
}

export function printConnection(emulator: RunningEmulator): void {
  console.log("GPU_RENTAL_API_URL=%s", emulator.url);
  // The seeded user's key is printed once, on purpose: scripts and other clients need it to talk to this
  // local emulator. It is a key of the emulator only, not of the live service.
  console.log("GPU_RENTAL_API_KEY=%s", emulator.apiKey);
  if (emulator.ssh) {
    console.log("SSH: instances are served on %s only (loopback), host key %s; their processes run as this user, in %s", SSH_HOST, emulator.ssh.hostKeyFile, emulator.ssh.sandboxes);
  }
}

export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    // Both listeners go at the first signal: one left behind would keep the process alive once stopped.
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
