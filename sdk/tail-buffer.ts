/**
 * The last `max` bytes written to it, and how many came before them: bounded output of a command that may
 * print without end (the emulator's onstart, the SDK's exec).
 */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Trimmed in batches: a copy per chunk would be quadratic in the output's size.
    if (this.size > this.max * 2) this.trim();
  }

  text(): string {
    this.trim();
    return Buffer.concat(this.chunks).toString("utf8");
  }

  private trim(): void {
    if (this.size <= this.max) return;
    const all = Buffer.concat(this.chunks);
    this.dropped += all.length - this.max;
    this.chunks = [all.subarray(all.length - this.max)];
    this.size = this.max;
  }
}
