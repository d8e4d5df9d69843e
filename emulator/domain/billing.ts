import { PartChanges, Persistent } from "./persistence";

/** What one instance has cost its owner so far. */
export interface InvoiceItem {
  userId: number;
  instanceId: number;
  amount: number;
  /** The period charged so far, ms since the epoch. */
  from: number;
  to: number;
}

/**
 * The billing ledger: every charge of an instance (compute while running, disk always) is added to that
 * instance's item, so a user can see where the credit went. Items stay after the instance is destroyed, as the
 * service's own records do: the ledger is history, so it tells a save which items changed (`changes()`) rather
 * than be read whole on every save.
 */
export class Billing implements Persistent<{ items: InvoiceItem[] }> {
  private items = new Map<string, InvoiceItem>();
  /** Items changed since the last save. */
  private changed = new Set<InvoiceItem>();

  record(userId: number, instanceId: number, amount: number, period: { from: number; to: number }): void {
    const key = `${userId}:${instanceId}`;
    const item = this.items.get(key);
    if (item) {
      item.amount += amount;
      item.to = period.to;
      this.changed.add(item);
    } else {
      const added = { userId, instanceId, amount, ...period };
      this.items.set(key, added);
      this.changed.add(added);
    }
  }

  itemsOf(userId: number): InvoiceItem[] {
    return [...this.items.values()].filter((item) => item.userId === userId);
  }

  /**
   * What the user paid in: the emulator takes no payments, so it is the credit the account was opened with,
   * which is its credit now plus everything charged since.
   */
  openingCredit(userId: number, creditNow: number): number {
    return this.itemsOf(userId).reduce((sum, item) => sum + item.amount, creditNow);
  }

  snapshot(): { items: InvoiceItem[] } {
    return { items: [...this.items.values()].map((item) => ({ ...item })) };
  }

  restore(data: { items: InvoiceItem[] }): void {
    this.items = new Map(data.items.map((item) => [`${item.userId}:${item.instanceId}`, { ...item }]));
    this.changed.clear();
  }

  /** Items are saved by `instanceId` (see recordKey): an instance has one item, whoever owns it. */
  changes(): PartChanges | undefined {
    if (this.changed.size === 0) return undefined;
    const set = [...this.changed].map((item) => ({ ...item }));
    this.changed.clear();
    return { items: { set } };
  }
}
