/**
 * Time as the SDK's deadlines, polls and pauses see it: real time by default; a simulated clock in tests and
 * benchmarks (the emulator's), so that minutes of waiting pass without sleeping. One clock travels through a
 * workflow: its deadlines are read from it and its pauses waited out on it.
 */
export interface Clock {
  /** Milliseconds, as Date.now counts them. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_TIME: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };
