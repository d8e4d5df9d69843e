import { startEmulator, EmulatorOptions, RunningEmulator } from "../emulator";

/** `gpu-rental emulator`: runs the emulator in the foreground until interrupted. */
export async function runEmulatorCommand(options: EmulatorOptions): Promise<void> {
  const emulator = await startEmulator(options);
  printConnection(emulator);
  console.log("Control API: %s/_emulator/state (Ctrl-C stops the emulator)", emulator.url);
  await untilSignal();
  await emulator.close();
}

export function printConnection(emulator: RunningEmulator): void {
  console.log("GPU_RENTAL_API_URL=%s", emulator.url);
  // The seeded user's key is printed once, on purpose: scripts and other clients need it to talk to this
  // local emulator. It is a key of the emulator only, not of the live service.
  console.log("GPU_RENTAL_API_KEY=%s", emulator.apiKey);
}

export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => resolve(signal);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
