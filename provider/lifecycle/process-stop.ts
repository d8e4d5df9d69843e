/**
 * The provider process's own stop. A CI runner cancelling a job signals every process of it (SIGINT or SIGTERM,
 * then SIGKILL seconds later), the provider's own among them. Node's default would end the process at once, and
 * the engine would never learn of the instances its creations had rented. Instead the creations under way are
 * interrupted (`signal`): each answers at once with what it made, which the engine writes to the state; nothing
 * more is rented; and the process ends once every operation under way has answered.
 *
 * One per provider process: the shell makes it when it starts serving and hands it to the provider's context.
 */
export class ProcessStop {
  private readonly controller = new AbortController();
  private operations = 0;
  private stopping: NodeJS.Signals | undefined;
  private installed = false;

  /** The signal of this process's creations: aborted when it is told to stop, or the engine cancels. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Interrupts the creations under way, and refuses new ones (the engine's Cancel; the handlers below). */
  interrupt(): void {
    this.controller.abort();
  }

  /**
   * Makes SIGTERM and SIGINT interrupt this process's creations, and end the process once they have answered
   * (within a few seconds); a second signal ends it at once.
   */
  onSignals(): void {
    if (this.installed) return;
    this.installed = true;
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => this.stop(signal));
  }

  /** Runs one provider operation, counted: a stopping process ends only once all of them have answered. */
  async tracked<T>(operation: () => Promise<T>): Promise<T> {
    this.operations++;
    try {
      return await operation();
    } finally {
      this.operations--;
      if (this.stopping) this.endWhenIdle();
    }
  }

  private stop(signal: NodeJS.Signals): void {
    // A second signal, or nothing under way (the engine ends its plugins with SIGINT too): end as the default would.
    if (this.stopping || this.operations === 0) return end(signal);
    this.stopping = signal;
    process.stderr.write(`gpu-rental: ${signal}: the ${this.operations} operation(s) under way answer with what they made; nothing more is rented\n`);
    this.interrupt();
    setTimeout(() => end(signal), ANSWER_MS).unref();
    this.endWhenIdle();
  }

  private endWhenIdle(): void {
    const signal = this.stopping!;
    if (this.operations === 0) setTimeout(() => end(signal), FLUSH_MS).unref();
  }
}

/** How long the operations under way may take to answer once the process is told to stop (real time: the process's own end). */
const ANSWER_MS = 8_000;
/** Time for the last answers to leave the process before it ends. */
const FLUSH_MS = 300;

/** Ends the process as the signal would have: the handlers go, and the signal comes again. */
function end(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}
