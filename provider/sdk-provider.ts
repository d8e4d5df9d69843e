import type * as pulumi from "@pulumi/pulumi";
import type { Lifecycle, ResourceFunctions } from "./lifecycle";

type LifecycleModule = typeof import("./lifecycle");
type EngineLog = typeof import("./engine-log");

/**
 * The dynamic provider of every gpu-rental resource kind. Pulumi serializes it into each resource's `__provider`
 * input and re-loads it in the provider host, a separate process; it holds no logic and names no kind, so every
 * resource serializes it alike and the host makes one, configured once: one context (clients, offer claims, spend
 * queue, the process's stop) for all the program's resources. The resource classes all pass the one `PROVIDER`
 * below, so a program serializes it once. Each method loads the lifecycle (from the program's
 * node_modules) and calls one function of the kind the resource's URN names (`__urn`, an input of every resource
 * and kept in its outputs). Keys reach the lifecycle through `configure` (stack config) or the environment, never
 * through inputs, so no key is written to state.
 *
 * Serialization keeps only what the methods refer to, and a module they refer to is written as a `require` of
 * its package path, which fails when the package sits in a program's node_modules and its `exports` hide that
 * file. So nothing here refers to another module: the lifecycle (and the engine log) is found at run time by
 * `fromProgram`, declared below in this same file, and only types are imported.
 */
export class SdkProvider implements pulumi.dynamic.ResourceProvider {
  /**
   * Set by `configure`, on the provider host's copy only. Declared, not a field: an instance has no property of
   * its own until then, so `PROVIDER` can be frozen and the copy the host deserializes (a new object) is not.
   */
  declare lifecycle?: Lifecycle;

  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    const { configureLifecycle, ProcessStop } = loadLifecycle();
    const stop = new ProcessStop();
    this.lifecycle = configureLifecycle(req.config, { stop });
    // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
    stop.onSignals();
  }

  /** Also warns, as the engine's own warning, what preview can tell of a creation (a spend cap that will refuse it). */
  async check(olds: any, news: any): Promise<pulumi.dynamic.CheckResult> {
    const { UNKNOWN } = loadLifecycle();
    const fns = this.functions(news);
    const warnings = await fns.warnings(olds, news, UNKNOWN, news.__urn);
    // The warning is sent without the URN (the host's warnings have none): it names the resource itself.
    if (warnings.length) await fromProgram<EngineLog>("gpu-rental/provider/engine-log").warnEngine(warnings);
    return fns.check(news, UNKNOWN, olds, news.__urn);
  }

  async diff(id: string, olds: any, news: any): Promise<pulumi.dynamic.DiffResult> {
    return this.functions(news).diff(id, olds, news, loadLifecycle().UNKNOWN);
  }

  /** The resource's URN comes as an input (the host gives `create` none): the creation's tokens are derived from it. */
  async create(inputs: any): Promise<pulumi.dynamic.CreateResult> {
    try {
      const { id, outs } = await this.functions(inputs).create(inputs, inputs.__urn);
      return { id, outs: withUrn(outs, inputs) };
    } catch (error) {
      throw withProvider(error, inputs);
    }
  }

  async read(id: string, props: any): Promise<pulumi.dynamic.ReadResult> {
    const state = await this.functions(props).read(id, props);
    // No id: the thing is gone, and refresh drops it from the stack.
    return state ? { id, props: withUrn(state, props) } : {};
  }

  async update(id: string, olds: any, news: any): Promise<pulumi.dynamic.UpdateResult> {
    try {
      return { outs: withUrn(await this.functions(news).update(id, olds, news, news.__urn), news) };
    } catch (error) {
      throw withProvider(error, news);
    }
  }

  async delete(id: string, props: any): Promise<void> {
    await this.functions(props).delete(id, props);
  }

  /** The functions of the kind the resource's URN names. */
  private functions(props: any): ResourceFunctions {
    if (!this.lifecycle) throw new Error("gpu-rental: the dynamic provider was not configured");
    return this.lifecycle.resource(loadLifecycle().kindOfUrn(String(props.__urn ?? "")));
  }
}

/**
 * The provider every gpu-rental resource class is registered with. @pulumi/pulumi caches a provider's serialized
 * closure by the provider object (a WeakMap of its `dynamic` module), so one object for all resources makes one
 * serialization a program, not one a resource (some 70 ms each on a busy machine), and one `__provider` text that
 * the host loads once. It carries nothing of a program or an account (a resource's account is in its inputs, and
 * the host configures its own copy), and it is frozen: a constant, not module state.
 */
export const PROVIDER: Readonly<SdkProvider> = Object.freeze(new SdkProvider());

/** The outputs with the resource's URN kept in them: later operations (read, delete) are given the outputs only. */
function withUrn(outs: object, props: any): Record<string, unknown> {
  return { ...outs, __urn: props.__urn };
}

/**
 * A partial creation (an error with the object's id: the engine keeps it in the state) records the serialized
 * provider and the URN with its outputs, as a success does: the host adds the provider to those only, and later
 * operations on the resource load the provider from them.
 */
function withProvider(error: any, inputs: any): unknown {
  if (error && error.id && error.properties) error.properties = { ...error.properties, __provider: inputs.__provider, __urn: inputs.__urn };
  return error;
}

function loadLifecycle(): LifecycleModule {
  return fromProgram<LifecycleModule>("gpu-rental/provider/lifecycle");
}

/**
 * A module of gpu-rental, resolved from the program's folder (the provider host's working directory) the way the
 * program itself resolves `gpu-rental`: installed, linked or in a workspace. A plain `require` would resolve from
 * Pulumi's own module instead, which finds the lifecycle only when both sit in the same node_modules.
 */
function fromProgram<T>(id: string): T {
  const { createRequire } = require("node:module");
  return createRequire(require("node:path").join(process.cwd(), "pulumi-program.js"))(id);
}
