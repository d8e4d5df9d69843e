/**
 * A part of the marketplace's state that survives a restart when the emulator runs with `--data-dir`.
 * `snapshot()` returns plain JSON data (no class instances, no Maps); `restore()` takes what it returned.
 */
export interface Persistent<T = unknown> {
  snapshot(): T;
  restore(data: T): void;
}
