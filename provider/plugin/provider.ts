import type * as pulumi from "@pulumi/pulumi";
import { NotFoundError } from "../../sdk/errors";
import { GENERATION_INPUT, kindOfUrn, Lifecycle, PartialCreationError, ProcessStop, REGISTRY, Registry, secretsOf, UNKNOWN } from "../lifecycle";
import { warnEngine } from "../engine-log";
import { packageSchema } from "../schema/schema";
import { revealed, withSecrets } from "./secrets";
import { AS_IN_SCHEMA, ProgramWords } from "./program-words";

type Props = Record<string, any>;

/**
 * The `gpu-rental` provider plugin: every language's programs reach the resources through it. A thin shell over
 * the one lifecycle of each kind, as the dynamic providers are: it only maps the engine's calls onto it (the
 * lifecycle made at Configure), unwraps secret inputs, and marks the secret properties of the kind's description
 * as secrets.
 */
export class GpuRentalProvider implements pulumi.provider.Provider {
  private lifecycle?: Lifecycle;

  constructor(
    readonly version: string,
    /** The process's stop: the engine's Cancel and the process's signals interrupt the creations under way. */
    readonly stop: ProcessStop,
    /** The kinds and functions served. */
    readonly registry: Registry = REGISTRY,
    /** How the program spells the inputs that refusals and warnings name (a Python program: `max_lifetime`). */
    private readonly words: ProgramWords = AS_IN_SCHEMA,
  ) {}

  /** The provider's lifecycle, made by Configure (the engine configures a provider before any other call of a resource). */
  configured(lifecycle: Lifecycle): void {
    this.lifecycle = lifecycle;
  }

  async getSchema(): Promise<string> {
    return JSON.stringify(packageSchema(this.version, this.registry));
  }

  async check(urn: string, olds: Props, news: Props): Promise<pulumi.provider.CheckResult> {
    const kind = kindOfUrn(urn);
    const fns = this.resource(urn);
    const result = fns.check(revealed(news), UNKNOWN, revealed(olds), urn);
    // What preview can tell of a creation (a spend cap that will refuse it), as the engine's own warning.
    const ahead = await fns.lookAhead(revealed(olds), revealed(news), UNKNOWN, urn);
    await warnEngine(ahead.warnings.map(this.words.text), urn);
    // The inputs as given (secrets the program marked stay secret), with what the check added (the kind's defaults,
    // the creation's generation) and the kind's own secrets marked too.
    const added = Object.fromEntries(Object.entries(result.inputs).filter(([key]) => !(key in news) || key === GENERATION_INPUT));
    return { inputs: this.secret(kind, { ...news, ...added }), failures: [...result.failures, ...ahead.failures].map(this.words.failure) };
  }

  async diff(id: string, urn: string, olds: Props, news: Props): Promise<pulumi.provider.DiffResult> {
    return this.resource(urn).diff(id, revealed(olds), revealed(news), UNKNOWN);
  }

  async create(urn: string, inputs: Props): Promise<pulumi.provider.CreateResult> {
    const kind = kindOfUrn(urn);
    try {
      const { id, outs } = await this.resource(urn).create(revealed(inputs), urn);
      return { id, outs: this.secret(kind, outs) };
    } catch (error) {
      throw this.secretPartial(kind, error);
    }
  }

  /** The engine cancels (its own SIGINT or SIGTERM): the creations under way answer at once with what they made. */
  async cancel(): Promise<void> {
    this.stop.interrupt();
  }

  /**
   * Refresh (the state's outputs given) or import (none given: only the id). An import also returns the
   * inputs that describe the object as it is, which `pulumi import` prints as program code.
   */
  async read(id: string, urn: string, props: Props = {}): Promise<pulumi.provider.ReadResult> {
    const kind = kindOfUrn(urn);
    const fns = this.resource(urn);
    if (Object.keys(props).length === 0) {
      const found = await fns.import(id);
      if (!found) throw new NotFoundError(`${kind} ${id} cannot be imported: the account has no ${kind} ${id}. Check the id, and the account the provider uses.`);
      return { id, props: this.secret(kind, found.outs), inputs: this.secret(kind, found.inputs) };
    }
    const state = await fns.read(id, revealed(props));
    // An empty id: the object is gone, and refresh drops it from the stack.
    return state ? { id, props: this.secret(kind, state) } : { id: "", props: {} };
  }

  async update(id: string, urn: string, olds: Props, news: Props): Promise<pulumi.provider.UpdateResult> {
    const kind = kindOfUrn(urn);
    try {
      return { outs: this.secret(kind, await this.resource(urn).update(id, revealed(olds), revealed(news), urn)) };
    } catch (error) {
      throw this.secretPartial(kind, error);
    }
  }

  async delete(id: string, urn: string, props: Props): Promise<void> {
    await this.resource(urn).delete(id, revealed(props));
  }

  /** A function of the package (`gpu-rental:index:<name>`). */
  async invoke(token: string, inputs: Props): Promise<pulumi.provider.InvokeResult> {
    if (!this.lifecycle) throw new Error("gpu-rental: the provider was not configured");
    return { outputs: { ...(await this.lifecycle.invoke(token, revealed(inputs))) } };
  }

  /** A copy with the kind's secret properties marked as secrets. */
  private secret(kind: string, props: object): Props {
    const description = this.registry.kinds.get(kind)?.description;
    return description ? withSecrets(props, secretsOf(description)) : { ...props };
  }

  /** A partial creation's outputs, with the kind's secrets marked as a success's are (the engine writes them to state). */
  private secretPartial(kind: string, error: unknown): unknown {
    if (error instanceof PartialCreationError) error.properties = this.secret(kind, error.properties);
    return error;
  }

  /** The functions of the kind a resource's URN names (`...::gpu-rental:index:Instance::name`). */
  private resource(urn: string) {
    if (!this.lifecycle) throw new Error("gpu-rental: the provider was not configured");
    const type = urn.split("::")[2]?.split("$").pop() ?? "";
    if (!type.startsWith("gpu-rental:index:")) throw new Error(`gpu-rental has no resource type ${type}`);
    return this.lifecycle.resource(kindOfUrn(urn));
  }
}
