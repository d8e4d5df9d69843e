/**
 * One per client, shared by all its calls: at most `concurrency` requests in flight. (The waits the service's
 * rate limits ask for are the lanes' of sdk/pacing.ts, per endpoint and key.)
 */
export class RequestGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly concurrency: number) {}

  /** Runs `send` when a slot is free. */
  async run<T>(send: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await send();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}
