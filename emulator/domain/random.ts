import { randomBytes, randomInt } from "node:crypto";

/** A small seeded generator (mulberry32): the same seed gives the same market and the same contention. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  int(min: number, max: number): number {
    return Math.floor(this.between(min, max + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** A token of hex characters, for keys and secrets (not cryptographic: this is a test double). */
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
    return out;
  }

  /** The sequence goes on where it was after a restart with `--data-dir`. */
  snapshot(): { state: number } {
    return { state: this.state };
  }

  restore(data: { state: number }): void {
    this.state = data.state;
  }
}

/**
 * The same helpers drawing from the system's cryptographic generator, for what must be unguessable (2FA
 * secrets, codes, TOTP secrets, backup codes): nothing about it follows from a seed, and a restart does not
 * replay it. It has no state worth saving.
 */
export class CryptoRandom extends Random {
  constructor() {
    super(0);
  }

  /** 48 random bits: every multiple of 2^-48 in [0, 1) equally likely. */
  override next(): number {
    return randomBytes(6).readUIntBE(0, 6) / 2 ** 48;
  }

  /** Without the float step, so codes are exactly uniform. */
  override int(min: number, max: number): number {
    return randomInt(min, max + 1);
  }
}
