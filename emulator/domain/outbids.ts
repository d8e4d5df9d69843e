import { Random } from "./random";
import type { InstanceRecord } from "./records";

const MS_PER_HOUR = 3_600_000;

/**
 * The emulator's outbids on its own (docs/control-api.md, `outbids`): other tenants bid on the machines of
 * interruptible instances, `perHour` times an hour of the emulator's clock on average for each running one (a
 * Poisson process: the time to the next outbid is drawn from an exponential). The winner bids above the instance's
 * bid by `raise` (a fraction), and that bid is the machine's minimum while the winner holds it (an exponential of
 * mean `holdHours`), then the minimum falls back to the offer's own. So a renter that is outbid sees the minimum it
 * must beat on its instance (`min_bid`), and may raise its bid to it or rent another machine.
 */
export interface OutbidSettings {
  /** Outbids an hour of the clock, on average, for each running interruptible instance; 0 (the default) turns them off. */
  perHour: number;
  /** How far above the outbid instance's bid the winner bids, a fraction. Default 0.25. */
  raise: number;
  /** How long, on average, the winner holds the machine's minimum up, in hours. Default 1. */
  holdHours: number;
}

export const DEFAULT_OUTBIDS: OutbidSettings = { perHour: 0, raise: 0.25, holdHours: 1 };

export interface OutbidDeps {
  now: () => number;
  /** The running interruptible instances. */
  running: () => InstanceRecord[];
  /** Another tenant outbids the instance at `at` (ms): it is stopped, charged up to then. */
  outbid: (instance: InstanceRecord, at: number) => void;
  /** The minimum bid of an offer's machine: `value`, or (undefined) its own again. */
  setMinBid: (offerId: number, value: number | undefined) => void;
}

/** A raised minimum and when it falls back. */
interface Raised {
  value: number;
  until: number;
}

export class Outbids {
  settings: OutbidSettings = { ...DEFAULT_OUTBIDS };
  /** When each running interruptible instance is next outbid (drawn when first seen running). */
  private readonly next = new Map<number, number>();
  private readonly raised = new Map<number, Raised>();
  /** Outbids made so far (the state's stats). */
  count = 0;

  constructor(
    private readonly random: Random,
    private readonly deps: OutbidDeps,
  ) {}

  /** Changes the settings; draws every instance's next outbid again under the new rate. */
  configure(settings: Partial<OutbidSettings>): void {
    this.settings = { ...this.settings, ...settings };
    this.next.clear();
  }

  /** Catches up with the clock: raised minimums that lapsed fall back, outbids that are due happen (in time order). */
  tick(): void {
    const now = this.deps.now();
    for (const [offerId, raised] of this.raised) {
      if (raised.until > now) continue;
      this.raised.delete(offerId);
      this.deps.setMinBid(offerId, undefined);
    }
    if (this.settings.perHour <= 0) return;
    const running = this.deps.running();
    const seen = new Set(running.map((i) => i.id));
    for (const id of this.next.keys()) if (!seen.has(id)) this.next.delete(id);
    const due: [InstanceRecord, number][] = [];
    for (const instance of running) {
      let at = this.next.get(instance.id);
      if (at === undefined) this.next.set(instance.id, (at = now + this.wait()));
      if (at <= now) due.push([instance, at]);
    }
    for (const [instance, at] of due.sort((a, b) => a[1] - b[1])) this.outbid(instance, at, now);
  }

  /** The winner's bid becomes the machine's minimum while it holds the machine; the instance stops. */
  private outbid(instance: InstanceRecord, at: number, now: number): void {
    this.next.delete(instance.id);
    const minimum = round4(instance.pricePerHour * (1 + this.settings.raise));
    const until = at + exponential(this.random, this.settings.holdHours * MS_PER_HOUR);
    this.raised.set(instance.offer.id, { value: minimum, until });
    this.deps.setMinBid(instance.offer.id, minimum);
    this.deps.outbid(instance, Math.min(at, now));
    this.count++;
  }

  /** Time to the next outbid of a running instance, ms. */
  private wait(): number {
    return exponential(this.random, MS_PER_HOUR / this.settings.perHour);
  }
}

/** An exponential draw of mean `mean` (inverse transform). */
function exponential(random: Random, mean: number): number {
  return -Math.log(1 - random.next()) * mean;
}

const round4 = (n: number) => Number(n.toFixed(4));
