import type * as pulumi from "@pulumi/pulumi";
import { NotFoundError } from "../../sdk/errors";
import { RESOURCE_FUNCTIONS, ResourceKind, UNKNOWN } from "../../sdk/resources/kinds";
import { RESOURCE_DESCRIPTIONS, secretsOf } from "../../sdk/resources/descriptions";
import { warnEngine } from "../engine-log";
import { packageSchema } from "../schema/schema";
import { revealed, withSecrets } from "./secrets";
import { AS_IN_SCHEMA, ProgramWords } from "./program-words";

type Props = Record<string, any>;

/**
 * The `gpu-rental` provider plugin: every language's programs reach the resources through it. A thin shell over
 * the one lifecycle of each kind (RESOURCE_FUNCTIONS), as the dynamic providers are: it only maps the engine's
 * calls onto it, unwraps secret inputs, and marks the secret properties of the kind's description as secrets.
 */
export class GpuRentalProvider implements pulumi.provider.Provider {
  constructor(
    readonly version: string,
    /** How the program spells the inputs that refusals and warnings name (a Python program: `max_lifetime`). */
    private readonly words: ProgramWords = AS_IN_SCHEMA,
  ) {}

  async getSchema(): Promise<string> {
    return JSON.stringify(packageSchema(this.version));
  }

  async check(urn: string, olds: Props, news: Props): Promise<pulumi.provider.CheckResult> {
    const kind = kindOf(urn);
    // A fleet's members are labelled after the resource's name unless the program says otherwise.
    if (kind === "GpuFleet" && news.labelPrefix === undefined) news = { ...news, labelPrefix: urn.split("::").pop() };
    const fns = RESOURCE_FUNCTIONS[kind];
    const result = fns.check(revealed(news), UNKNOWN);
    // What preview can tell of a creation (a spend cap that will refuse it), as the engine's own warning.
    await warnEngine((await fns.warnings(revealed(olds), revealed(news), UNKNOWN)).map(this.words.text), urn);
    // The inputs as given (secrets the program marked stay secret), with the kind's own secrets marked too.
    return { inputs: secret(kind, news), failures: result.failures.map(this.words.failure) };
  }

  async diff(id: string, urn: string, olds: Props, news: Props): Promise<pulumi.provider.DiffResult> {
    return RESOURCE_FUNCTIONS[kindOf(urn)].diff(id, revealed(olds), revealed(news), UNKNOWN);
  }

  async create(urn: string, inputs: Props): Promise<pulumi.provider.CreateResult> {
    const kind = kindOf(urn);
    const { id, outs } = await RESOURCE_FUNCTIONS[kind].create(revealed(inputs));
    return { id, outs: secret(kind, outs) };
  }

  /**
   * Refresh (the state's outputs given) or import (none given: only the id). An import also returns the
   * inputs that describe the object as it is, which `pulumi import` prints as program code.
   */
  async read(id: string, urn: string, props: Props = {}): Promise<pulumi.provider.ReadResult> {
    const kind = kindOf(urn);
    const fns = RESOURCE_FUNCTIONS[kind];
    if (Object.keys(props).length === 0) {
      const found = await fns.import(id);
      if (!found) throw new NotFoundError(`${kind} ${id} cannot be imported: the account has no ${kind} ${id}. Check the id, and the account the provider uses.`);
      return { id, props: secret(kind, found.outs), inputs: secret(kind, found.inputs) };
    }
    const state = await fns.read(id, revealed(props));
    // An empty id: the object is gone, and refresh drops it from the stack.
    return state ? { id, props: secret(kind, state) } : { id: "", props: {} };
  }

  async update(id: string, urn: string, olds: Props, news: Props): Promise<pulumi.provider.UpdateResult> {
    const kind = kindOf(urn);
    return { outs: secret(kind, await RESOURCE_FUNCTIONS[kind].update(id, revealed(olds), revealed(news))) };
  }

  async delete(id: string, urn: string, props: Props): Promise<void> {
    await RESOURCE_FUNCTIONS[kindOf(urn)].delete(id, revealed(props));
  }
}

/** The kind a resource's URN names (`...::gpu-rental:index:Instance::name`). */
function kindOf(urn: string): ResourceKind {
  const type = urn.split("::")[2]?.split("$").pop() ?? "";
  const kind = type.replace(/^gpu-rental:index:/, "");
  if (!(kind in RESOURCE_FUNCTIONS)) throw new Error(`gpu-rental has no resource type ${type}`);
  return kind as ResourceKind;
}

function secret(kind: ResourceKind, props: object): Props {
  return withSecrets(props, secretsOf(RESOURCE_DESCRIPTIONS[kind]));
}
