/**
 * The provider process's own stop. A CI runner cancelling a job signals every process of it (SIGINT or SIGTERM,
 * then SIGKILL seconds later), the provider's own among them. Node's default would end the process at once, and
 * the engine would never learn of the instances its creations had rented. Instead the creations under way are
 * interrupted (the signal below): each answers at once with what it made, which the engine writes to the state;
 * nothing more is rented; and the process ends once every operation under way has answered.
 */

const controller = new AbortController();
let operations = 0;
let stopping: NodeJS.Signals | undefined;
let installed = false;

/** How long the operations under way may take to answer once the process is told to stop. */
const ANSWER_MS = 8_000;
/** Time for the last answers to leave the process before it ends. */
const FLUSH_MS = 300;

/** The signal of this process's creations: aborted when it is told to stop, or the engine cancels. */
export function interruption(): AbortSignal {
  return controller.signal;
}

/** Interrupts the creations under way, and refuses new ones (the engine's Cancel; the handlers below). */
export function interrupt(): void {
  controller.abort();
}

/**
 * Makes SIGTERM and SIGINT interrupt this process's creations, and end the process once they have answered
 * (within a few seconds); a second signal ends it at once. Once a process: the Pulumi shells call it when
 * they start serving.
 */
export function stopOnSignals(): void {
  if (installed) return;
  installed = true;
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => stop(signal));
}

/** Runs one provider operation, counted: a stopping process ends only once all of them have answered. */
export async function tracked<T>(operation: () => Promise<T>): Promise<T> {
  operations++;
  try {
    return await operation();
  } finally {
    operations--;
    if (stopping) endWhenIdle();
  }
}

function stop(signal: NodeJS.Signals): void {
  // A second signal, or nothing under way (the engine ends its plugins with SIGINT too): end as the default would.
  if (stopping || operations === 0) return end(signal);
  stopping = signal;
  process.stderr.write(`gpu-rental: ${signal}: the ${operations} operation(s) under way answer with what they made; nothing more is rented\n`);
  interrupt();
  setTimeout(() => end(signal), ANSWER_MS).unref();
  endWhenIdle();
}

function endWhenIdle(): void {
  if (operations === 0) setTimeout(() => end(stopping!), FLUSH_MS).unref();
}

/** Ends the process as the signal would have: the handlers go, and the signal comes again. */
function end(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}
