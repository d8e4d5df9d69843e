import type { Clock, CreationIdentity, GpuRentalClient, RentOptions, WaitOptions } from "../../sdk";
import type { LeftBehind } from "./creation";
import type { FunctionDescription, ResourceDescription } from "./description";
import type { CheckFailure, SpecOf } from "./spec";

/**
 * What one resource kind is: its description (what the schema, the TypeScript argument types and the reference
 * page are made from), its declared inputs, and its lifecycle. One object per kind, in one file of this folder,
 * registered once (registry.ts); the Pulumi shells only adapt it (managed.ts does what every kind shares).
 */

export type Props = Readonly<Record<string, any>>;

/**
 * What each function of a kind gets for one provider operation (the provider's context, made at Configure, for
 * the resource's account): the client, the clock every deadline, poll and pause goes by, where progress lines go,
 * and (create and update) which creation of which resource it is and the signal that interrupts it.
 */
export interface Operation {
  client: GpuRentalClient;
  clock: Clock;
  log(line: string): void;
  /** The stack's maxHourlySpend: read when a rental needs it (a ConfigurationError when it is not a number). */
  spendCap(): number | undefined;
  /** The resource's URN and generation, from which its creation tokens are derived (resourceToken). */
  identity?: CreationIdentity;
  /** Aborted when the provider process is told to stop (SIGTERM, SIGINT) or the engine cancels. */
  signal?: AbortSignal;
  /** How long boots are waited for, and how often polled: the defaults, unless tests say otherwise. */
  wait?: WaitOptions;
  /** The rentals' time and failure budgets: the defaults, unless tests say otherwise. */
  rent?: RentOptions;
  /** What earlier runs left, listed once for a context's creations (none: each creation lists). */
  leftBehind?: LeftBehind;
}

export interface Diff {
  changes: boolean;
  replaces: string[];
  /** Changed in place (for the kinds that say). */
  updates?: string[];
  deleteBeforeReplace: boolean;
}

/**
 * What a kind's diff may use beyond the two specs: the client of the resource's account, for a kind whose objects
 * can drift in ways that only the service shows (a fleet's member that failed, an instance whose creation was cut off).
 */
export interface DiffLook {
  client(): GpuRentalClient;
}

/** An existing object as `pulumi import` takes it: the inputs that declare it as it is, and its outputs. */
export interface Imported {
  inputs: Record<string, unknown>;
  outs: Record<string, unknown>;
}

/** The resource a check is for, as far as it is known: its name (the URN's last part), and the marker of values not known yet. */
export interface CheckContext {
  name?: string;
  unknown?: unknown;
}

/** `S`: the parsed spec; `O`: the outputs beyond the inputs. */
export interface Kind<S = any, O extends object = any> {
  readonly description: ResourceDescription;
  /** The kind's own inputs: their names come from the zod shape. */
  readonly spec: SpecOf<S>;
  /**
   * The kind's check when it does more than its spec's (defaults given the resource's name, inputs refused): the
   * inputs to record and every failure, the spec's included.
   */
  check?(news: Readonly<Record<string, unknown>>, resource: CheckContext): { inputs: Record<string, unknown>; failures: CheckFailure[] };
  /** Synchronous for most kinds; a promise where the diff looks at the service. */
  diff(olds: Props, news: Props, unknown?: unknown, look?: DiffLook): Diff | Promise<Diff>;
  create(spec: S, op: Operation): Promise<{ id: string; outs: S & O }>;
  /** Takes an object that exists under management: checks it is the one the spec declares, and makes it so. */
  adopt(id: string, spec: S, op: Operation): Promise<{ id: string; outs: object }>;
  /** The current outputs, or null when the object is gone. */
  read(id: string, props: Props, op: Operation): Promise<O | null>;
  import(id: string, op: Operation): Promise<Imported | null>;
  /** Absent where every change of the kind's own inputs replaces. */
  update?(id: string, olds: Props, spec: S, op: Operation): Promise<O>;
  /** `props`: the state, for a kind whose objects are named there (a fleet's members). */
  delete(id: string, props: Props, op: Operation): Promise<void>;
  /** What `pulumi preview` can tell of the creation of inputs whose check passed (a kind that rents: a spend cap that will refuse it). */
  warnings?(news: Readonly<Record<string, unknown>>, unknown: unknown, op: Operation): Promise<string[]>;
  /** Inputs of a creation that the service would refuse, as only the service can tell (a volume larger than its offer): said at preview. */
  refusals?(news: Readonly<Record<string, unknown>>, unknown: unknown, op: Operation): Promise<CheckFailure[]>;
}

/** A function of the package (`gpu-rental:index:<name>`): its description, its arguments, and what it answers. */
export interface LookupFunction<A = any, R extends object = object> {
  readonly description: FunctionDescription;
  readonly args: SpecOf<A>;
  invoke(args: A, op: Operation): Promise<R>;
}
