import { AccountRef, ClientOptions, Clock, ConfigSource, GpuRentalClient, REAL_TIME, Rentals, resolveConnection, spendCapOf } from "../../sdk";
import { LeftBehind } from "./creation";
import { ProcessStop } from "./process-stop";

/**
 * The provider's context, made once at Configure and passed down to every operation: its settings (the stack's
 * config, or an explicit provider's inputs), one client per account, what its rentals share (offer claims, the
 * queue of capped rentals), where progress goes, the one clock of every deadline, poll and pause, and the
 * process's stop. Nothing of it lives in a module: two contexts (two tests, two providers) share nothing.
 */
export interface ContextOptions {
  clock?: Clock;
  /**
   * Where progress lines go, with the URN of the resource they are about when known. Default the process's stderr
   * (the engine shows a dynamic provider's with the resource's output; a plugin sends them to the engine instead).
   */
  write?: (line: string, urn?: string) => void;
  /** The process's stop (one per provider process). Default a stop of this context's own. */
  stop?: ProcessStop;
}

export class ProviderContext {
  readonly clock: Clock;
  readonly rentals: Rentals;
  readonly stop: ProcessStop;
  readonly write: (line: string, urn?: string) => void;
  private readonly clients = new Map<string, GpuRentalClient>();
  private readonly leftBehinds = new Map<GpuRentalClient, LeftBehind>();
  /** The generation in the state of each resource checked by this provider, by URN (see generationOf). */
  private readonly checkedGenerations = new Map<string, number>();

  constructor(
    readonly config: ConfigSource,
    options: ContextOptions = {},
  ) {
    this.clock = options.clock ?? REAL_TIME;
    this.rentals = new Rentals(this.clock);
    this.stop = options.stop ?? new ProcessStop();
    this.write = options.write ?? ((line) => void process.stderr.write(`${line}\n`));
  }

  /**
   * The client of an account (the provider's default account when none is named): one per account and call
   * options, so that every resource of a program shares its request gate (a 429's Retry-After holds all of them
   * back), and every client of the context its rentals.
   */
  client(account?: AccountRef, options: ClientOptions = {}): GpuRentalClient {
    const connection = resolveConnection({}, account, this.config);
    const key = `${connection.apiUrl}\n${connection.apiKey}\n${JSON.stringify(options)}`;
    let client = this.clients.get(key);
    if (!client) this.clients.set(key, (client = new GpuRentalClient({ ...options, ...connection, clock: this.clock, rentals: this.rentals })));
    return client;
  }

  /** What earlier runs left in the account of `client`, for this context's creations (creation.ts). */
  leftBehind(client: GpuRentalClient): LeftBehind {
    let found = this.leftBehinds.get(client);
    if (!found) this.leftBehinds.set(client, (found = new LeftBehind(client)));
    return found;
  }

  /** The stack's `gpu-rental:maxHourlySpend`, read when a rental needs it. */
  spendCap(): number | undefined {
    return spendCapOf(this.config);
  }

  /**
   * The generation of the creation a check is for: 0 at first, one more than the state's at each check of a
   * resource the state holds. The engine checks a resource about to be replaced twice: against its state, then
   * (for the new half) against nothing; the second check takes the state's generation from the first, as the same
   * `up` always checks in that order.
   */
  generationOf(stateGeneration: number | undefined, urn: string | undefined): number {
    const previous = stateGeneration ?? (urn === undefined ? undefined : this.checkedGenerations.get(urn));
    if (stateGeneration !== undefined && urn !== undefined) this.checkedGenerations.set(urn, stateGeneration);
    return previous === undefined ? 0 : previous + 1;
  }
}
