import * as fs from "node:fs";
import * as path from "node:path";
import { MarketplaceSnapshot, SnapshotSource } from "../domain/marketplace";
import { ChangeTracker, Replay } from "./changes";
import { Sealer, writeDurably } from "./files";
import { Journal } from "./journal";
import { acquireDataDirLock, DataDirLock } from "./lock";

export { DataDirInUse } from "./lock";

const SNAPSHOT = "gpu-rental-state/2";
/** The journal is folded into the snapshot once it is larger than this and than the snapshot. */
const COMPACT_AFTER_BYTES = 1 << 20;

/**
 * The emulator's state on disk (`--data-dir`), in three files:
 * - `state.json`: a sealed snapshot of the whole state and the number of the last journal record in it,
 *   replaced atomically (emulator/storage/files.ts);
 * - `journal`: one sealed record per save since then, what changed and nothing else
 *   (emulator/storage/journal.ts, emulator/storage/changes.ts);
 * - `state.key`: the key both are sealed with, readable by its owner only.
 *
 * Acknowledged means durable: a save appends its record and flushes it to the disk before it returns, and a
 * change is answered only after its save. A save costs what changed, not what the emulator has seen: the
 * journal is folded into a new snapshot once it outgrows it (and when the emulator stops), so compacting
 * costs at most a byte per byte journaled. Only one emulator at a time works on a folder
 * (emulator/storage/lock.ts); temporary files a crash left are removed at the start.
 */
export class FileStore {
  readonly file: string;
  private readonly journal: Journal;
  private readonly tracker = new ChangeTracker();
  /** The number of the last record saved (in the snapshot or the journal). */
  private seq = 0;
  private snapshotBytes = 0;
  /** What the last save read, to compact from when the emulator stops. */
  private source: SnapshotSource | undefined;
  private compacted = false;

  private constructor(readonly dir: string, private readonly lock: DataDirLock, private readonly sealer: Sealer) {
    this.file = path.join(dir, "state.json");
    this.journal = new Journal(path.join(dir, "journal"), sealer);
  }

  /** Takes the folder (or throws DataDirInUse) and clears what a crash left behind. */
  static async open(dir: string): Promise<FileStore> {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const lock = await acquireDataDirLock(dir);
    try {
      for (const file of fs.readdirSync(dir)) if (file.endsWith(".tmp") || file === "lock") fs.rmSync(path.join(dir, file), { force: true });
      return new FileStore(dir, lock, Sealer.forDir(dir));
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** The saved state: the snapshot brought up to date by the journal; undefined for a new folder. */
  load(): MarketplaceSnapshot | undefined {
    const snapshot = this.readSnapshot();
    const records = this.journal.read();
    if (!snapshot) {
      if (records.length) throw new Error(`${this.file} is missing but ${this.journal.file} is not empty: the folder was damaged; move it away to start afresh`);
      return undefined;
    }
    const replay = new Replay(snapshot.state);
    this.seq = snapshot.seq;
    for (const record of records) {
      // Records up to the snapshot's were folded into it (a crash came before the journal was emptied).
      if (record.seq <= snapshot.seq) continue;
      if (record.seq !== this.seq + 1) throw new Error(`${this.journal.file} does not follow ${this.file} (record ${record.seq} after ${this.seq}): the folder was damaged; move it away to start afresh`);
      replay.apply(record.changes);
      this.seq = record.seq;
    }
    return replay.result();
  }

  /** Saves what changed since the last save (the first save after the start writes a whole snapshot). */
  async save(source: SnapshotSource): Promise<void> {
    this.source = source;
    if (!this.compacted || (this.journal.bytes > COMPACT_AFTER_BYTES && this.journal.bytes > this.snapshotBytes)) {
      this.compact(source);
      return;
    }
    const { snapshot, changes: reported } = source.delta();
    const changes = this.tracker.diff(snapshot, reported);
    if (!changes) return;
    try {
      this.journal.append({ seq: this.seq + 1, changes });
      this.seq++;
    } catch (error) {
      // The tracker and the parts count these changes as saved: the next save writes a whole snapshot instead
      // (which also empties the journal of whatever part of this record reached it).
      this.compacted = false;
      throw error;
    }
  }

  /** Tells later emulators that try this folder where this one listens. */
  describe(url: string): void {
    this.lock.describe(url);
  }

  /** Folds the journal into the snapshot and gives the folder up (the emulator stopped). */
  async release(): Promise<void> {
    try {
      if (this.source && this.journal.bytes > 0) this.compact(this.source);
    } finally {
      this.journal.close();
      await this.lock.release();
    }
  }

  /** A whole snapshot, then an empty journal: a crash in between leaves records the snapshot already holds. */
  private compact(source: SnapshotSource): void {
    // Until this snapshot is written, a failure leaves the next save to write one.
    this.compacted = false;
    source.delta(); // the parts' own change lists start again from here
    const state = source.snapshot();
    const sealed = this.sealer.seal({ seq: this.seq, state }, SNAPSHOT).toString("base64");
    const text = JSON.stringify({ format: SNAPSHOT, cipher: "aes-256-gcm", sealed });
    writeDurably(this.file, text);
    this.snapshotBytes = text.length;
    this.journal.clear();
    this.tracker.reset(state);
    this.compacted = true;
  }

  private readSnapshot(): { seq: number; state: MarketplaceSnapshot } | undefined {
    if (!fs.existsSync(this.file)) return undefined;
    try {
      const outer = JSON.parse(fs.readFileSync(this.file, "utf8"));
      if (outer.format === SNAPSHOT) return this.sealer.open(Buffer.from(outer.sealed, "base64"), SNAPSHOT) as { seq: number; state: MarketplaceSnapshot };
      if (outer.format === "gpu-rental-state/1") return { seq: 0, state: this.sealer.openLegacy(outer) as MarketplaceSnapshot };
      throw new Error(`unknown format ${JSON.stringify(outer.format)}`);
    } catch (error) {
      throw new Error(`${this.file} cannot be read (${(error as Error).message}); nothing was changed: move the folder away to start afresh`);
    }
  }
}

/** Whether a process of that id runs (one of another user's counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
