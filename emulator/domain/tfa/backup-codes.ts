import type { UserRecord } from "../records";
import { Clock } from "../clock";
import { unauthorized } from "../errors";
import { Random } from "../random";
import { BACKUP_CODE_COUNT, PURGE_AFTER_MS } from "./constants";
import { sha256 } from "./hash";

/** Backup codes are `XXXX-XXXX-XXXX` in these letters and digits: no look-alikes (0/O, 1/I). */
const BACKUP_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

export interface BackupCodeRecord {
  userId: number;
  /** SHA-256 of the code: the plaintext is shown once only. */
  hash: string;
  createdAt: number;
  usedAt: number | null;
  /** Soft deletion: when 2FA was disabled or the codes were regenerated. */
  deletedAt: number | null;
}

export class BackupCodes {
  private rows: BackupCodeRecord[] = [];

  constructor(private readonly clock: Clock, private readonly random: Random) {}

  active(user: UserRecord): BackupCodeRecord[] {
    return this.rows.filter((c) => c.userId === user.id && c.usedAt === null && c.deletedAt === null);
  }

  /** A new generation of codes replaces all others; the plaintexts returned are shown once, then only hashes remain. */
  replace(user: UserRecord): string[] {
    this.purgeSpent();
    this.softDelete(user);
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => this.newCode());
    const now = this.clock.now();
    for (const code of codes) this.rows.push({ userId: user.id, hash: hashBackupCode(code), createdAt: now, usedAt: null, deletedAt: null });
    return codes;
  }

  /** Spends one of the user's active codes; a code is good once. */
  use(user: UserRecord, code: string): void {
    const hash = hashBackupCode(code);
    const record = this.active(user).find((c) => c.hash === hash);
    if (!record) throw unauthorized("invalid_backup_code", "The backup code is invalid or was already used.");
    record.usedAt = this.clock.now();
  }

  softDelete(user: UserRecord): void {
    const now = this.clock.now();
    for (const code of this.rows) if (code.userId === user.id && code.deletedAt === null) code.deletedAt = now;
  }

  private newCode(): string {
    const group = () => Array.from({ length: 4 }, () => this.random.pick([...BACKUP_ALPHABET])).join("");
    return `${group()}-${group()}-${group()}`;
  }

  /** Codes used or soft-deleted more than `PURGE_AFTER_MS` ago: dropped where new ones are made, so rows stay bounded. */
  private purgeSpent(): void {
    const before = this.clock.now() - PURGE_AFTER_MS;
    this.rows = this.rows.filter((c) => Math.min(c.usedAt ?? Infinity, c.deletedAt ?? Infinity) > before);
  }

  // ---- persistence ----

  save(): BackupCodeRecord[] {
    return this.rows;
  }

  load(rows: BackupCodeRecord[]): void {
    this.rows = rows;
  }
}

/** Codes are typed by hand: surrounding spaces and case do not matter. */
function hashBackupCode(code: string): string {
  return sha256(code.trim().toUpperCase());
}
