import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MarketplaceSnapshot } from "./domain/marketplace";

/**
 * The emulator's state on disk (`--data-dir`): one file, encrypted, replaced atomically.
 *
 * - Crash safety: a save writes a temporary file, flushes it to the disk, renames it over the old one and
 *   flushes the folder, so after a crash (even `kill -9` in the middle of a write) the file holds the old state
 *   or the new one, never a mix. Saves are synchronous and a change is acknowledged only after its save, so
 *   nothing acknowledged is lost.
 * - Secrets at rest: the state holds TOTP secrets and registry passwords, which the emulator must be able to
 *   read back, so the whole file is sealed with AES-256-GCM under a key kept beside it (`state.key`, readable
 *   by its owner only), as Pulumi keeps a passphrase file. API keys and backup codes are hashes in any case.
 * - One emulator per folder: a lock file names the process that holds it; a second emulator refuses to start
 *   rather than overwrite the first one's changes. The lock of a process that died is taken over.
 */
export class FileStore {
  readonly file: string;
  private readonly key: Buffer;
  private readonly lock: string;

  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = path.join(dir, "state.json");
    this.lock = path.join(dir, "lock");
    this.takeLock();
    this.key = this.loadKey();
  }

  load(): MarketplaceSnapshot | undefined {
    if (!fs.existsSync(this.file)) return undefined;
    try {
      const sealed = JSON.parse(fs.readFileSync(this.file, "utf8"));
      const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(sealed.iv, "base64"));
      decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
      const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString("utf8");
      return JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.file} cannot be read (${(error as Error).message}); move the folder away to start afresh`);
    }
  }

  /** Writes the state as it is now (see the class comment for why this is safe to acknowledge after). */
  async save(takeSnapshot: () => MarketplaceSnapshot): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(JSON.stringify(takeSnapshot()), "utf8"), cipher.final()]);
    const sealed = { format: "gpu-rental-state/1", cipher: "aes-256-gcm", iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") };
    writeDurably(this.file, JSON.stringify(sealed));
  }

  /** Gives the folder up (the emulator stopped). */
  release(): void {
    heldHere.delete(this.lock);
    if (fs.existsSync(this.lock) && fs.readFileSync(this.lock, "utf8").trim() === String(process.pid)) fs.rmSync(this.lock);
  }

  private takeLock(): void {
    const inUse = (by: string) => new Error(`${this.dir} is in use by another emulator (${by}); stop it or use another --data-dir`);
    if (heldHere.has(this.lock)) throw inUse("in this process");
    try {
      fs.writeFileSync(this.lock, String(process.pid), { flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(fs.readFileSync(this.lock, "utf8").trim());
      if (holder && holder !== process.pid && isAlive(holder)) throw inUse(`process ${holder}`);
      fs.writeFileSync(this.lock, String(process.pid));
    }
    heldHere.add(this.lock);
  }

  private loadKey(): Buffer {
    const keyFile = path.join(this.dir, "state.key");
    if (!fs.existsSync(keyFile)) writeDurably(keyFile, randomBytes(32).toString("hex"));
    return Buffer.from(fs.readFileSync(keyFile, "utf8").trim(), "hex");
  }
}

/** Lock files this process holds (two emulators in one process must not share a folder either). */
const heldHere = new Set<string>();

/** Temporary file, flush, rename, flush the folder: the file is the old text or the new one. */
function writeDurably(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temporary, "w", 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  const dirFd = fs.openSync(path.dirname(file), "r");
  try {
    fs.fsyncSync(dirFd);
  } finally {
    fs.closeSync(dirFd);
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
