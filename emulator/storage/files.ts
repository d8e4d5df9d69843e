import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Sealing: the state holds TOTP secrets and registry passwords, which the emulator must read back, so
 * everything written is encrypted and authenticated (AES-256-GCM) under a key kept beside it (`state.key`,
 * readable by its owner only), as Pulumi keeps a passphrase file. A sealed text names what it is (the
 * associated data), so a journal record cannot pass for a snapshot or the other way round.
 */
export class Sealer {
  constructor(private readonly key: Buffer) {}

  /** Reads the folder's key, making one first if there is none. */
  static forDir(dir: string): Sealer {
    const keyFile = path.join(dir, "state.key");
    if (!fs.existsSync(keyFile)) writeDurably(keyFile, randomBytes(32).toString("hex"));
    const key = Buffer.from(fs.readFileSync(keyFile, "utf8").trim(), "hex");
    if (key.length !== 32) throw new Error(`${keyFile} is not a key of 64 hex digits: it was damaged or replaced; move the folder away to start afresh`);
    return new Sealer(key);
  }

  /** iv (12 bytes), tag (16), ciphertext, as one buffer. */
  seal(value: unknown, what: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv).setAAD(Buffer.from(what));
    const data = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]);
  }

  /** The value, or an error when the bytes were not sealed as `what` under this key (damaged, or another folder's). */
  open(sealed: Buffer, what: string): unknown {
    if (sealed.length < 28) throw new Error("too short");
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(0, 12)).setAAD(Buffer.from(what));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("utf8"));
  }

  /** The older single-file form (`gpu-rental-state/1`): iv, tag and data in base64, no associated data. */
  openLegacy(sealed: { iv: string; tag: string; data: string }): unknown {
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(sealed.iv, "base64"));
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]).toString("utf8"));
  }
}

/**
 * Temporary file, flush, rename, flush the folder: the file is the old text or the new one, whatever stops
 * the process. The temporary file's name ends in `.tmp`, so a start removes what a crash left.
 */
export function writeDurably(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = fs.openSync(temporary, "w", 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  syncDir(path.dirname(file));
}

export function syncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
