import * as fs from "node:fs";
import { Changes } from "./changes";
import { Sealer, syncDir } from "./files";
import * as path from "node:path";

const RECORD = "gpu-rental-journal/1";

export interface JournalRecord {
  seq: number;
  changes: Changes;
}

/**
 * The journal: one sealed record per save, appended and flushed to the disk before the save returns (so
 * before the client is answered). A record is one line: base64 of the sealed `{seq, changes}`.
 *
 * Reading it back: a last line without its newline is a write that a crash cut short. Its save never
 * returned, so no client was told of it: it is dropped (and said so). Anything else that cannot be read, a
 * complete line that does not open under the folder's key or a record out of sequence, is damage: the start
 * is refused, naming the record and the byte where the good part ends.
 */
export class Journal {
  private fd: number | undefined;
  /** Bytes in the journal now. */
  bytes = 0;

  constructor(readonly file: string, private readonly sealer: Sealer) {}

  /** The records in order, after dropping a cut-short last one. */
  read(): JournalRecord[] {
    if (!fs.existsSync(this.file)) return [];
    const text = fs.readFileSync(this.file);
    const records: JournalRecord[] = [];
    let start = 0;
    while (start < text.length) {
      const end = text.indexOf(0x0a, start);
      if (end < 0) {
        console.warn(`emulator: ${this.file}: the last save was cut short by a crash (${text.length - start} bytes after byte ${start}); it was never acknowledged to a client, so it is dropped`);
        fs.truncateSync(this.file, start);
        break;
      }
      const line = text.subarray(start, end).toString("latin1");
      let record: JournalRecord;
      try {
        if (!/^[A-Za-z0-9+/]+=*$/.test(line)) throw new Error("not a sealed record");
        record = this.sealer.open(Buffer.from(line, "base64"), RECORD) as JournalRecord;
        const expected = records.length ? records[records.length - 1].seq + 1 : undefined;
        if (!Number.isInteger(record.seq) || (expected !== undefined && record.seq !== expected)) throw new Error(`record ${record.seq} is out of sequence (expected ${expected})`);
      } catch (error) {
        throw new Error(
          `${this.file} is damaged at record ${records.length + 1} (byte ${start}): ${(error as Error).message}. Nothing was changed. ` +
            `Move the folder away to start afresh, or cut the journal to its first ${start} bytes to start from the state saved before the damage`,
        );
      }
      records.push(record);
      start = end + 1;
    }
    return records;
  }

  append(record: JournalRecord): void {
    const line = Buffer.from(this.sealer.seal(record, RECORD).toString("base64") + "\n");
    const fd = this.open();
    // One write: a crash leaves a prefix of it at most (no newline), which read() drops.
    const written = fs.writeSync(fd, line);
    if (written !== line.length) throw new Error(`${this.file}: only ${written} of ${line.length} bytes were written (is the disk full?)`);
    fs.fdatasyncSync(fd);
    this.bytes += line.length;
  }

  /** Empties the journal (its records are in the snapshot now). */
  clear(): void {
    const fd = this.open();
    fs.ftruncateSync(fd, 0);
    fs.fsyncSync(fd);
    this.bytes = 0;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): number {
    if (this.fd === undefined) {
      const existed = fs.existsSync(this.file);
      this.fd = fs.openSync(this.file, "a", 0o600);
      this.bytes = fs.fstatSync(this.fd).size;
      if (!existed) syncDir(path.dirname(this.file));
    }
    return this.fd;
  }
}
