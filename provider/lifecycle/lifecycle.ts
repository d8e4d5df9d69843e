import type { AccountRef, ConfigSource } from "../../sdk";
import { ContextOptions, ProviderContext } from "./context";
import type { Props } from "./kind";
import { managed, ResourceFunctions } from "./managed";
import { REGISTRY, Registry } from "./registry";

/**
 * The lifecycle as a configured provider serves it: every kind of the registry over one context, made at
 * Configure. Both shells (the dynamic providers and the plugin) hold one and map the engine's calls onto it.
 */
export class Lifecycle {
  private readonly resources = new Map<string, ResourceFunctions>();

  constructor(
    readonly context: ProviderContext,
    readonly registry: Registry = REGISTRY,
  ) {}

  /** The functions of a kind, by its name (`Instance`). */
  resource(kind: string): ResourceFunctions {
    let functions = this.resources.get(kind);
    if (!functions) {
      const found = this.registry.kinds.get(kind);
      if (!found) throw new Error(`gpu-rental has no resource type ${kind}`);
      this.resources.set(kind, (functions = managed(found, this.context)));
    }
    return functions;
  }

  /**
   * A function invoked by its token (`gpu-rental:index:<name>`), with its arguments (those not given may come as
   * null), in the provider's account or `account`. Bad arguments fail before anything is asked, each named.
   */
  async invoke(token: string, args: Props, account?: AccountRef): Promise<object> {
    const name = token.replace(/^gpu-rental:index:/, "");
    const fn = this.registry.functions.get(name);
    if (!fn || name === token) throw new Error(`gpu-rental has no function ${token}`);
    const given = fn.args.parse(Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null && value !== undefined)));
    const op = { client: this.context.client(account), clock: this.context.clock, log: this.context.write, spendCap: () => this.context.spendCap() };
    return fn.invoke(given, op);
  }
}

/** The lifecycle of a provider configured with `config` (stack config, or an explicit provider's inputs). */
export function configureLifecycle(config: ConfigSource, options: ContextOptions & { registry?: Registry } = {}): Lifecycle {
  return new Lifecycle(new ProviderContext(config, options), options.registry);
}

/** The kind a resource's URN names, whichever shell made it (`...::gpu-rental:index:Instance::name`, `...::pulumi-nodejs:dynamic/gpu-rental:Instance::name`). */
export function kindOfUrn(urn: string): string {
  const type = urn.split("::")[2]?.split("$").pop() ?? "";
  return type.split(":").pop() ?? "";
}
