import { randomBytes } from "node:crypto";

/** Results kept at once: the oldest go first (the service's result files expire too). */
const MAX_RESULTS = 500;

/**
 * The texts an instance operation answers by URL (logs, a command's output), as the service answers a `result_url`
 * to fetch without a key (docs/service-facts.md#instance-logs-and-commands): each under a token no one can guess,
 * not ready (the URL answers 404) until its work is done. Not saved.
 */
export class Results {
  private readonly texts = new Map<string, string | undefined>();

  /** A new result, not ready yet: its token. */
  open(): string {
    const token = randomBytes(16).toString("hex");
    this.texts.set(token, undefined);
    while (this.texts.size > MAX_RESULTS) this.texts.delete(this.texts.keys().next().value!);
    return token;
  }

  fill(token: string, text: string): void {
    if (this.texts.has(token)) this.texts.set(token, text);
  }

  /** The text; undefined while not ready or for a token that names nothing. */
  read(token: string): string | undefined {
    return this.texts.get(token);
  }
}
