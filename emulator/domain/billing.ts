import { PartChanges, Persistent } from "./persistence";

/**
 * What one instance (or volume) has cost its owner so far. A volume's storage has an item of its own, under its id
 * in `instanceId` with `volume` set: instance and volume ids never meet (4,000,001 up, and 800,001 up).
 */
export interface InvoiceItem {
  userId: number;
  instanceId: number;
  volume?: true;
  amount: number;
  /** The period charged so far, ms since the epoch. */
  from: number;
  to: number;
}

/** What a user's destroyed instances beyond the latest `KEPT_PER_USER` cost, summed: one record a user. */
export interface EarlierCharges {
  /** How many destroyed instances it sums. */
  instances: number;
  amount: number;
  /** From the first charge of the first of them to the last charge of the last, ms since the epoch. */
  from: number;
  to: number;
}

export interface BillingSnapshot {
  items: InvoiceItem[];
  /** `[userId, what their earlier destroyed instances cost]`; absent in state saved before it was kept. */
  earlier?: [number, EarlierCharges][];
}

/**
 * How many destroyed instances of a user keep an item of their own (five full pages of the charges view):
 * beyond that, the oldest are summed into the user's `EarlierCharges`, so the ledger stays the
 * size of what lives and of this bound, however many instances come and go, and every total stays right.
 */
export const KEPT_PER_USER = 500;

/**
 * The billing ledger: every charge of an instance (compute while running, disk always) is added to that
 * instance's item, so a user can see where the credit went. An item stays after its instance is destroyed, as
 * the service's own records do, until the user has more than `KEPT_PER_USER` such items: then the oldest one
 * (by its last charge) is folded into the user's `EarlierCharges`. The ledger tells a save which records
 * changed (`changes()`) rather than be read whole on every save.
 */
export class Billing implements Persistent<BillingSnapshot> {
  private items = new Map<number, InvoiceItem>();
  private earlier = new Map<number, EarlierCharges>();
  /** By user, the items of destroyed instances, oldest last charge first. */
  private destroyed = new Map<number, Set<number>>();
  /** Records changed since the last save. */
  private changed = new Set<InvoiceItem>();
  private folded = new Set<number>();
  private changedEarlier = new Set<number>();

  record(userId: number, instanceId: number, amount: number, period: { from: number; to: number }, volume?: true): void {
    const item = this.items.get(instanceId);
    if (item) {
      item.amount += amount;
      item.to = period.to;
      this.changed.add(item);
    } else {
      const added = { userId, instanceId, amount, ...period, ...(volume && { volume }) };
      this.items.set(instanceId, added);
      this.changed.add(added);
    }
  }

  /** The instance is destroyed: it will be charged no more, and its item may be folded in time. */
  ended(instanceId: number): void {
    const item = this.items.get(instanceId);
    if (!item) return;
    const ended = this.destroyed.get(item.userId) ?? new Set<number>();
    this.destroyed.set(item.userId, ended);
    ended.add(instanceId);
    while (ended.size > KEPT_PER_USER) this.fold(ended.values().next().value!);
  }

  /** After a restore: every item whose instance is not among the `live` ones belongs to a destroyed instance. */
  reconcile(live: Set<number>): void {
    this.destroyed.clear();
    const done = [...this.items.values()].filter((item) => !live.has(item.instanceId)).sort((a, b) => a.to - b.to);
    for (const item of done) this.ended(item.instanceId);
  }

  itemsOf(userId: number): InvoiceItem[] {
    return [...this.items.values()].filter((item) => item.userId === userId);
  }

  /** What the user's destroyed instances beyond the latest `KEPT_PER_USER` cost, if any were folded. */
  earlierOf(userId: number): EarlierCharges | undefined {
    const earlier = this.earlier.get(userId);
    return earlier && { ...earlier };
  }

  /**
   * What the user paid in: the emulator takes no payments, so it is the credit the account was opened with,
   * which is its credit now plus everything charged since.
   */
  openingCredit(userId: number, creditNow: number): number {
    return this.itemsOf(userId).reduce((sum, item) => sum + item.amount, creditNow + (this.earlier.get(userId)?.amount ?? 0));
  }

  snapshot(): BillingSnapshot {
    return {
      items: [...this.items.values()].map((item) => ({ ...item })),
      earlier: [...this.earlier].map(([userId, charges]) => [userId, { ...charges }]),
    };
  }

  /** Then `reconcile` with the live instances (the marketplace does), so destroyed ones are known again. */
  restore(data: BillingSnapshot): void {
    this.items = new Map(data.items.map((item) => [item.instanceId, { ...item }]));
    this.earlier = new Map((data.earlier ?? []).map(([userId, charges]) => [userId, { ...charges }]));
    this.destroyed.clear();
    this.changed.clear();
    this.folded.clear();
    this.changedEarlier.clear();
  }

  /** Items are saved by `instanceId` (see recordKey), the earlier charges by user (`[userId, charges]`). */
  changes(): PartChanges | undefined {
    if (this.changed.size === 0 && this.folded.size === 0 && this.changedEarlier.size === 0) return undefined;
    const changes: PartChanges = {};
    if (this.changed.size || this.folded.size) {
      changes.items = { set: [...this.changed].map((item) => ({ ...item })), removed: [...this.folded].map(String) };
    }
    if (this.changedEarlier.size) {
      changes.earlier = { set: [...this.changedEarlier].map((userId) => [userId, { ...this.earlier.get(userId)! }]) };
    }
    this.changed.clear();
    this.folded.clear();
    this.changedEarlier.clear();
    return changes;
  }

  private fold(instanceId: number): void {
    const item = this.items.get(instanceId)!;
    this.destroyed.get(item.userId)!.delete(instanceId);
    this.items.delete(instanceId);
    // Set and removed in one save would be set again on replay (removals go first): it is only removed.
    this.changed.delete(item);
    this.folded.add(instanceId);
    const sum = this.earlier.get(item.userId);
    if (sum) {
      sum.instances++;
      sum.amount += item.amount;
      sum.from = Math.min(sum.from, item.from);
      sum.to = Math.max(sum.to, item.to);
    } else {
      this.earlier.set(item.userId, { instances: 1, amount: item.amount, from: item.from, to: item.to });
    }
    this.changedEarlier.add(item.userId);
  }
}
