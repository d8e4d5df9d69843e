import { createHash } from "node:crypto";
import { canonicalJson, Offer, OFFER_FIELDS, OfferSearchRequest, OfferType } from "../../sdk/schemas";
import { costsOf, HOURS_PER_MONTH } from "./catalogue";
import { atLeast, DEFAULT_LIMIT, MAX_LIMIT, search, Table } from "./filters";
import { badRequest, notFound } from "./errors";
import { Persistent } from "./persistence";

/** Reserved (prepaid) offers are discounted against on-demand. */
const RESERVED_DISCOUNT = 0.8;

/** Who holds an offer that is no longer on the market. */
export type Holder = { kind: "instance"; instanceId: number } | { kind: "other_tenant" };

/**
 * What identifies the offers of a market without listing them: they are generated at start from `--seed` and
 * `--offers`, so a save only has to tell whether they are the same ones. `fingerprint` is a hash of every
 * offer without its dates (which follow the clock at start); the count and ids say what `--offers` was.
 */
export interface CatalogueCheck {
  count: number;
  firstId: number | null;
  lastId: number | null;
  fingerprint: string;
}

/** The market as saved: which offers are held, and the catalogue they belong to (not the offers themselves). */
export interface MarketSnapshot {
  catalogue: CatalogueCheck;
  held: [number, Holder][];
}

/** The offers as searches of one market type see them, and which of their rows are held. */
interface MarketTable {
  table: Table<Offer>;
  rowOf: Map<number, number>;
  held: Uint8Array;
}

/** The instance market: the seeded offers and which of them are rented. */
export class Market implements Persistent<MarketSnapshot> {
  private readonly offers = new Map<number, Offer>();
  private readonly held = new Map<number, Holder>();
  private tables: Partial<Record<"ondemand" | "bid" | "reserved", MarketTable>> = {};
  /** Computed once: the offers never change. */
  private catalogueCheck?: CatalogueCheck;
  /** Minimum bids other tenants hold up for a while (./outbids.ts), over the offers' own. */
  private readonly minBids = new Map<number, number>();

  constructor(offers: Offer[]) {
    for (const offer of offers) this.offers.set(offer.id, offer);
  }

  get size(): number {
    return this.offers.size;
  }

  /** How many offers are on the market (not rented), whatever a search's limit. */
  countOnMarket(): number {
    return this.offers.size - this.held.size;
  }

  /**
   * Offers still on the market that match, priced for the requested market type, ordered, limited. A `bid`
   * search shows interruptible prices and leaves out on-demand-only offers (those without `min_bid`).
   */
  search(request: OfferSearchRequest): Offer[] {
    const { order, type, limit, allocated_storage, ...filters } = request;
    // Offers too small for the disk wanted are left out like any other filter would leave them out.
    const { table, held } = this.tableFor(type);
    return search(table, { filters: atLeast(filters, "disk_space", allocated_storage), order, limit }, OFFER_FIELDS, {
      defaultLimit: DEFAULT_LIMIT,
      maxLimit: MAX_LIMIT,
      excluded: held,
    });
  }

  /**
   * The market as a search of that type sees it, priced, laid out by column once (offers do not change), with
   * the rows of held offers marked (kept up to date by take and release, so a search reads a byte per row).
   */
  private tableFor(type: OfferType | undefined): MarketTable {
    const kind = type === "bid" || type === "reserved" ? type : "ondemand";
    let built = this.tables[kind];
    if (!built) {
      const offers = [...this.offers.values()].filter((offer) => kind !== "bid" || isInterruptible(offer)).map((offer) => priceFor(this.withMinBid(offer), type));
      const rowOf = new Map(offers.map((offer, row) => [offer.id, row]));
      const held = new Uint8Array(offers.length);
      for (const id of this.held.keys()) if (rowOf.has(id)) held[rowOf.get(id)!] = 1;
      built = this.tables[kind] = { table: new Table(offers), rowOf, held };
    }
    return built;
  }

  private markHeld(offerId: number, held: boolean): void {
    for (const built of Object.values(this.tables)) {
      const row = built.rowOf.get(offerId);
      if (row !== undefined) built.held[row] = held ? 1 : 0;
    }
  }

  /** The GPU models of the market's offers, rented or not, in name order. */
  gpuNames(): string[] {
    return [...new Set([...this.offers.values()].map((offer) => offer.gpu_name))].sort();
  }

  /** Every offer not rented, as an on-demand search shows it. */
  onMarket(): Offer[] {
    return [...this.offers.values()].filter((offer) => !this.held.has(offer.id));
  }

  /** The offer as listed (on-demand), rented or not. */
  offer(offerId: number): Offer | undefined {
    return this.offers.get(offerId);
  }

  /** Every offer, rented or not, as listed (on-demand). */
  allOffers(): IterableIterator<Offer> {
    return this.offers.values();
  }

  /** Who holds the offer (an instance, or another tenant through contention); undefined while it is on the market. */
  holderOf(offerId: number): Holder | undefined {
    return this.held.get(offerId);
  }

  /** The offer, if it is still on the market. */
  available(offerId: number): Offer | undefined {
    return this.held.has(offerId) ? undefined : this.offers.get(offerId);
  }

  /** Takes an offer off the market for an instance; `no_such_ask` when it is unknown or already rented. */
  take(offerId: number, holder: Holder): Offer {
    const offer = this.available(offerId);
    if (!offer) {
      throw notFound("no_such_ask", `Offer ${offerId} does not exist or is no longer available. Search the offers again and pick another.`);
    }
    this.held.set(offerId, holder);
    this.markHeld(offerId, true);
    return this.withMinBid(offer);
  }

  /** The offer's minimum bid now: one another tenant holds up, else its own. */
  minBid(offerId: number): number | null | undefined {
    return this.minBids.get(offerId) ?? this.offers.get(offerId)?.min_bid;
  }

  /** Another tenant holds the machine's minimum bid at `value` (undefined: the offer's own again); bid searches follow. */
  setMinBid(offerId: number, value: number | undefined): void {
    if (value === undefined) this.minBids.delete(offerId);
    else this.minBids.set(offerId, value);
    // The bid table prices every offer at its minimum: laid out again on the next search.
    delete this.tables.bid;
  }

  /** The offer with its minimum bid of the moment. */
  private withMinBid(offer: Offer): Offer {
    const raised = this.minBids.get(offer.id);
    return raised === undefined || !isInterruptible(offer) ? offer : { ...offer, min_bid: raised };
  }

  /** Puts an offer back on the market (its instance was destroyed). */
  release(offerId: number): void {
    this.held.delete(offerId);
    this.markHeld(offerId, false);
  }

  snapshot(): MarketSnapshot {
    return { catalogue: { ...this.catalogue() }, held: [...this.held.entries()].map(([id, h]) => [id, { ...h }]) };
  }

  /**
   * Takes back which offers are held. The offers themselves are this start's: a save made with another
   * `--offers` or `--seed` is refused rather than applied to offers it was not made with. (Saves from before
   * the catalogue check list their offers: they are checked the same way.)
   */
  restore(data: MarketSnapshot | { offers: Offer[]; held: [number, Holder][] }): void {
    const saved = "catalogue" in data ? data.catalogue : catalogueOf(data.offers);
    const ours = this.catalogue();
    const made = `this data dir was made with --offers ${saved.count} (offer ids ${saved.firstId}..${saved.lastId})`;
    if (saved.count !== ours.count || saved.firstId !== ours.firstId || saved.lastId !== ours.lastId) {
      throw new Error(`${made}, this emulator has --offers ${ours.count}: start it with --offers ${saved.count}, or use another data dir`);
    }
    if (saved.fingerprint !== ours.fingerprint) {
      throw new Error(`${made} but other offers (another --seed, or another emulator version): start it with the --seed it was made with, or use another data dir`);
    }
    this.held.clear();
    for (const [id, holder] of data.held) this.held.set(id, { ...holder });
    // The tables' marks are made again from the held offers when next searched.
    this.tables = {};
  }

  private catalogue(): CatalogueCheck {
    return (this.catalogueCheck ??= catalogueOf([...this.offers.values()]));
  }
}

function catalogueOf(offers: Offer[]): CatalogueCheck {
  const hash = createHash("sha256");
  for (const { start_date: _start, end_date: _end, ...offer } of offers) hash.update(canonicalJson(offer)).update("\n");
  return {
    count: offers.length,
    firstId: offers.length ? offers[0].id : null,
    lastId: offers.length ? offers[offers.length - 1].id : null,
    fingerprint: hash.digest("hex").slice(0, 32),
  };
}

/** Whether an offer can be rented as an interruptible (bid) instance. */
export function isInterruptible(offer: Offer): boolean {
  return typeof offer.min_bid === "number";
}

/** The storage part of an hourly price: `$/GB/month` over the disk, per hour. */
export function storagePerHour(offer: Offer, diskGb: number): number {
  return hourlyStorage(offer.storage_cost ?? 0, diskGb);
}

/** `storageCost` $/GB/month for `gb` GB, per hour: a disk's, or a volume's. */
export function hourlyStorage(storageCost: number, gb: number): number {
  return (storageCost * gb) / HOURS_PER_MONTH;
}

/** The compute part of the on-demand price (the offer's `dph_total` includes storage for the default disk). */
export function computePerHour(offer: Offer): number {
  return offer.dph_base ?? offer.dph_total;
}

const round4 = (n: number) => Number(n.toFixed(4));

/**
 * The offer as a search of that market type shows it: a bid search at the minimum bid (the lowest `price` that
 * creation accepts; disk is charged on top, as for on-demand), reserved at a discount, on-demand as listed.
 */
export function priceFor(offer: Offer, type: OfferType | undefined): Offer {
  const diskHour = Number(offer.storage_total_cost ?? 0);
  if (type === "bid" && isInterruptible(offer)) return { ...offer, dph_base: offer.min_bid!, dph_total: offer.min_bid!, is_bid: true, ...costsOf(offer.min_bid!, offer.min_bid!, diskHour) };
  if (type === "reserved") {
    const total = round4(offer.dph_total * RESERVED_DISCOUNT);
    return { ...offer, dph_total: total, ...costsOf(computePerHour(offer), total, diskHour) };
  }
  return offer;
}

/**
 * The compute price of a new instance: on-demand without `price`; a bid with it, whatever type the offer was
 * found with (a price always means a bid), and only on an interruptible offer. A bid below the minimum is still
 * a contract on the live service (docs/service-facts.md#a-bid-below-the-minimum-still-creates-an-instance): `belowMinimum` says so, and creation makes it stopped (outbid).
 */
export function contractPrice(offer: Offer, bid: number | undefined): { isBid: boolean; pricePerHour: number; belowMinimum?: true } {
  if (bid === undefined) return { isBid: false, pricePerHour: computePerHour(offer) };
  if (!isInterruptible(offer)) {
    throw badRequest("invalid_price", `Offer ${offer.id} is on-demand only and takes no bid: omit price, or search with type bid.`);
  }
  return bid < offer.min_bid! ? { isBid: true, pricePerHour: bid, belowMinimum: true } : { isBid: true, pricePerHour: bid };
}
