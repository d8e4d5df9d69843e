export interface OutboxMessage {
  id: number;
  channel: "sms" | "email";
  /** A phone number (E.164) or an email address. */
  to: string;
  userId: number;
  code: string;
  text: string;
  /** Epoch ms. */
  sentAt: number;
}

/**
 * Where SMS and email codes "go": tests and developers read them through the control API or in-process. A test
 * aid, in memory only: it is never saved (it holds codes in plaintext and would grow the state file forever).
 */
export class Outbox {
  private messages: OutboxMessage[] = [];
  private nextId = 1;

  push(message: Omit<OutboxMessage, "id">): OutboxMessage {
    const stored = { id: this.nextId++, ...message };
    this.messages.push(stored);
    return stored;
  }

  list(filter: { to?: string; channel?: "sms" | "email" } = {}): OutboxMessage[] {
    return this.messages.filter((m) => (!filter.to || m.to === filter.to) && (!filter.channel || m.channel === filter.channel));
  }

  /** The last message sent to `to`. */
  latest(to: string): OutboxMessage | undefined {
    return this.list({ to }).at(-1);
  }

  clear(): void {
    this.messages = [];
  }
}
