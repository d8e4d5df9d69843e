import * as fs from "node:fs";
import * as path from "node:path";
import { MarketplaceSnapshot } from "./domain/marketplace";

/**
 * The emulator's state on disk (`--data-dir`): one JSON file, replaced atomically. A save writes a temporary
 * file, flushes it to the disk, renames it over the old one and flushes the folder, so after a crash (even
 * `kill -9` in the middle of a write) the file is the old state or the new one, never a mix. A change is
 * acknowledged to the client only after its save: nothing acknowledged is lost.
 */
export class FileStore {
  readonly file: string;
  private writing: Promise<void> = Promise.resolve();
  private next?: Promise<void>;

  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, "state.json");
  }

  load(): MarketplaceSnapshot | undefined {
    if (!fs.existsSync(this.file)) return undefined;
    try {
      return JSON.parse(fs.readFileSync(this.file, "utf8"));
    } catch (error) {
      throw new Error(`${this.file} cannot be read (${(error as Error).message}); move it away to start afresh`);
    }
  }

  /**
   * Saves the state as it is when the write starts. Calls that arrive while a write is under way share the
   * next write: it starts after the current one and snapshots then, so it holds all of their changes.
   */
  save(takeSnapshot: () => MarketplaceSnapshot): Promise<void> {
    if (this.next) return this.next;
    const next = this.writing.then(() => {
      this.next = undefined;
      this.write(takeSnapshot());
    });
    this.next = next;
    this.writing = next.catch(() => undefined);
    return next;
  }

  private write(snapshot: MarketplaceSnapshot): void {
    const temporary = `${this.file}.${process.pid}.tmp`;
    const fd = fs.openSync(temporary, "w", 0o600);
    try {
      fs.writeSync(fd, JSON.stringify(snapshot));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temporary, this.file);
    const dirFd = fs.openSync(this.dir, "r");
    try {
      fs.fsyncSync(dirFd);
    } finally {
      fs.closeSync(dirFd);
    }
  }
}
