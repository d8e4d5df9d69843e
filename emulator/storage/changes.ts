import { PartChanges, recordKey } from "../domain/persistence";
import { MarketplaceSnapshot } from "../domain/marketplace";

/*
 * What a save writes: the state as units (each field of each part, each top-level setting), and of each unit
 * what changed since the last save. A unit that is a list of named records (see recordKey) changes record by
 * record; any other unit is written whole when it differs.
 */

/** One unit's change: its new value, its removal, or records set and removed. */
export type UnitChange = { whole: unknown } | { drop: true } | { set: unknown[]; removed: string[] };

/** The changes of one save, by unit: a journal record's content. */
export type Changes = Record<string, UnitChange>;

type Saved = { whole: string } | { records: Map<string, string> };

/** The units of a (possibly partial) snapshot: `parts.<part>` (an empty object for a part that has fields), `parts.<part>.<field>`, `<setting>`. */
function unitsOf(snapshot: Partial<MarketplaceSnapshot>): Map<string, unknown> {
  const units = new Map<string, unknown>();
  for (const [name, value] of Object.entries(snapshot)) {
    if (name !== "parts") {
      units.set(name, value);
      continue;
    }
    for (const [part, data] of Object.entries(value as Record<string, unknown>)) {
      if (!isPlainObject(data)) {
        units.set(`parts.${part}`, data);
        continue;
      }
      units.set(`parts.${part}`, {});
      for (const [field, fieldValue] of Object.entries(data)) if (fieldValue !== undefined) units.set(`parts.${part}.${field}`, fieldValue);
    }
  }
  return units;
}

/** A list whose records all have distinct keys, by key in list order; undefined for anything else. */
function keyed(value: unknown): Map<string, unknown> | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const records = new Map<string, unknown>();
  for (const record of value) {
    const key = recordKey(record);
    if (key === undefined || records.has(key)) return undefined;
    records.set(key, record);
  }
  return records;
}

/** The last saved state, unit by unit, as JSON text: what the next save compares against. */
export class ChangeTracker {
  private saved = new Map<string, Saved>();

  /** Starts again from a whole snapshot (just written in full). */
  reset(snapshot: MarketplaceSnapshot): void {
    this.saved.clear();
    for (const [unit, value] of unitsOf(snapshot)) this.saved.set(unit, savedForm(value));
  }

  /**
   * The changes from the last save to `snapshot` (which lacks the parts that report their own changes) and
   * `reported` (those parts' changes); the tracker then holds the new state. Undefined when nothing changed.
   */
  diff(snapshot: MarketplaceSnapshot, reported: Record<string, PartChanges>): Changes | undefined {
    const changes: Changes = {};
    const units = unitsOf(snapshot);
    for (const [unit, value] of units) {
      const change = this.diffUnit(unit, value);
      if (change) changes[unit] = change;
    }
    // A field a part no longer has (an optional one left out), in the parts that were compared.
    const compared = Object.keys(snapshot.parts);
    for (const unit of [...this.saved.keys()]) {
      const part = unit.split(".")[1];
      if (unit.startsWith("parts.") && compared.includes(part) && !units.has(unit)) {
        changes[unit] = { drop: true };
        this.saved.delete(unit);
      }
    }
    for (const [part, fields] of Object.entries(reported)) {
      for (const [field, { set, removed }] of Object.entries(fields)) changes[`parts.${part}.${field}`] = { set, removed: removed ?? [] };
    }
    return Object.keys(changes).length ? changes : undefined;
  }

  private diffUnit(unit: string, value: unknown): UnitChange | undefined {
    const before = this.saved.get(unit);
    const records = keyed(value);
    if (!records) {
      const text = JSON.stringify(value);
      if (before && "whole" in before && before.whole === text) return undefined;
      this.saved.set(unit, { whole: text });
      return { whole: value };
    }
    const texts = new Map<string, string>();
    for (const [key, record] of records) texts.set(key, JSON.stringify(record));
    this.saved.set(unit, { records: texts });
    if (!before || !("records" in before) || !sameOrderAfterChange(before.records, texts)) return { whole: value };
    const set: unknown[] = [];
    for (const [key, text] of texts) if (before.records.get(key) !== text) set.push(records.get(key));
    const removed = [...before.records.keys()].filter((key) => !texts.has(key));
    return set.length || removed.length ? { set, removed } : undefined;
  }
}

/**
 * Whether setting and removing records (a record set keeps its place, a new one goes last) turns the old list
 * into the new one in its order; if not, the list is written whole, so a restart lists things as before.
 */
function sameOrderAfterChange(before: Map<string, string>, after: Map<string, string>): boolean {
  const expected = [...before.keys()].filter((key) => after.has(key));
  for (const key of after.keys()) if (!before.has(key)) expected.push(key);
  let i = 0;
  for (const key of after.keys()) if (expected[i++] !== key) return false;
  return true;
}

function savedForm(value: unknown): Saved {
  const records = keyed(value);
  if (!records) return { whole: JSON.stringify(value) };
  return { records: new Map([...records].map(([key, record]) => [key, JSON.stringify(record)])) };
}

/** A snapshot being brought up to date by the journal's changes, in order. */
export class Replay {
  private readonly units: Map<string, unknown>;

  constructor(snapshot: MarketplaceSnapshot) {
    this.units = unitsOf(snapshot);
  }

  apply(changes: Changes): void {
    for (const [unit, change] of Object.entries(changes)) {
      if ("whole" in change) this.units.set(unit, change.whole);
      else if ("drop" in change) this.units.delete(unit);
      else {
        const current = this.units.get(unit);
        const records = current instanceof Map ? current : new Map((Array.isArray(current) ? current : []).map((r) => [recordKey(r), r]));
        for (const key of change.removed) records.delete(key);
        for (const record of change.set) records.set(recordKey(record), record);
        this.units.set(unit, records);
      }
    }
  }

  result(): MarketplaceSnapshot {
    const snapshot: Record<string, unknown> & { parts: Record<string, unknown> } = { parts: {} };
    // Parts first (`parts.x` before `parts.x.field`): sorted, a part's own unit comes before its fields.
    for (const [unit, value] of [...this.units].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const plain = value instanceof Map ? [...value.values()] : value;
      const [head, part, field] = unit.split(".");
      if (head !== "parts" || part === undefined) snapshot[unit] = plain;
      else if (field === undefined) snapshot.parts[part] = plain;
      else (snapshot.parts[part] as Record<string, unknown>)[field] = plain;
    }
    return snapshot as unknown as MarketplaceSnapshot;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === "object" && !Array.isArray(value);
