/**
 * A part of the marketplace's state that survives a restart when the emulator runs with `--data-dir`.
 * `snapshot()` returns plain JSON data (no class instances, no Maps); `restore()` takes what it returned.
 *
 * A save writes only what changed since the last one (emulator/storage/store.ts): it compares each field of a part's
 * snapshot with the last saved one, record by record where the field is a list of records (see `recordKey`).
 * A part that keeps history, records that only ever grow in number (the billing ledger), implements
 * `changes()` instead, so that a save need not read its history: it is snapshotted whole only when the store
 * compacts.
 */
export interface Persistent<T = unknown> {
  snapshot(): T;
  restore(data: T): void;
  /** The records changed since the last call, by field of the snapshot (they then replace those of same key). */
  changes?(): PartChanges | undefined;
}

/** Records set (replacing the record of the same `recordKey`, or added last) and keys removed, by field. */
export type PartChanges = Record<string, { set: unknown[]; removed?: string[] }>;

/**
 * What names a record in a saved list, so that a change saves that record alone: its `id`, else `keyHash`,
 * `secret` or `instanceId`; the first element of a `[key, value]` pair. A list whose records have no such name
 * (or share one) is saved whole when it changes.
 */
export function recordKey(record: unknown): string | undefined {
  if (Array.isArray(record)) return record.length === 2 && isKey(record[0]) ? String(record[0]) : undefined;
  if (!record || typeof record !== "object") return undefined;
  for (const name of ["id", "keyHash", "secret", "instanceId"]) {
    const value = (record as Record<string, unknown>)[name];
    if (isKey(value)) return String(value);
  }
  return undefined;
}

const isKey = (value: unknown) => typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
