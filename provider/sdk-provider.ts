import type * as pulumi from "@pulumi/pulumi";
import type { ResourceFunctions, ResourceKind } from "../sdk";

type Sdk = typeof import("../sdk");
type EngineLog = typeof import("./engine-log");

/**
 * The dynamic provider of one resource kind. Pulumi serializes it into each resource's `__provider` input and
 * re-loads it in the provider host, a separate process, so it holds nothing but the kind's name and no logic:
 * each method loads the SDK (from the program's node_modules) and calls one function of it. Keys reach the SDK
 * through `configure` (stack config) or the environment, never through inputs, so no key is written to state.
 *
 * Serialization keeps only what the methods refer to, and a module they refer to is written as a `require` of
 * its package path, which fails when the package sits in a program's node_modules and its `exports` hide that
 * file. So nothing here refers to another module: the SDK (and the engine log) is found at run time by
 * `fromProgram`, declared below in this same file, and only types are imported.
 */
export class SdkProvider implements pulumi.dynamic.ResourceProvider {
  constructor(readonly kind: ResourceKind) {}

  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    const sdk = loadSdk();
    sdk.configureFromStackConfig(req.config);
    // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
    sdk.stopOnSignals();
  }

  /** Also warns, as the engine's own warning, what preview can tell of a creation (a spend cap that will refuse it). */
  async check(olds: any, news: any): Promise<pulumi.dynamic.CheckResult> {
    const sdk = loadSdk();
    const fns = sdk.RESOURCE_FUNCTIONS[this.kind];
    const warnings = await fns.warnings(olds, news, sdk.UNKNOWN);
    // The dynamic provider host gives `check` no URN: the warning names the resource itself.
    if (warnings.length) await fromProgram<EngineLog>("gpu-rental/provider/engine-log").warnEngine(warnings);
    return fns.check(news, sdk.UNKNOWN, olds, news.__urn);
  }

  async diff(id: string, olds: any, news: any): Promise<pulumi.dynamic.DiffResult> {
    const sdk = loadSdk();
    return sdk.RESOURCE_FUNCTIONS[this.kind].diff(id, olds, news, sdk.UNKNOWN);
  }

  /** The resource's URN comes as an input (the host gives `create` none): the creation's tokens are derived from it. */
  async create(inputs: any): Promise<pulumi.dynamic.CreateResult> {
    try {
      return await functionsOf(this.kind).create(inputs, inputs.__urn);
    } catch (error) {
      throw withProvider(error, inputs);
    }
  }

  async read(id: string, props: any): Promise<pulumi.dynamic.ReadResult> {
    const state = await functionsOf(this.kind).read(id, props);
    // No id: the thing is gone, and refresh drops it from the stack.
    return state ? { id, props: state } : {};
  }

  async update(id: string, olds: any, news: any): Promise<pulumi.dynamic.UpdateResult> {
    try {
      return { outs: await functionsOf(this.kind).update(id, olds, news, news.__urn) };
    } catch (error) {
      throw withProvider(error, news);
    }
  }

  async delete(id: string, props: any): Promise<void> {
    await functionsOf(this.kind).delete(id, props);
  }
}

/**
 * A partial creation (an error with the object's id: the engine keeps it in the state) records the serialized
 * provider with its outputs, as a success does: the host adds it to those only, and later operations on the
 * resource load the provider from them.
 */
function withProvider(error: any, inputs: any): unknown {
  if (error && error.id && error.properties) error.properties = { ...error.properties, __provider: inputs.__provider };
  return error;
}

function functionsOf(kind: ResourceKind): ResourceFunctions {
  return loadSdk().RESOURCE_FUNCTIONS[kind];
}

function loadSdk(): Sdk {
  return fromProgram<Sdk>("gpu-rental/sdk");
}

/**
 * A module of gpu-rental, resolved from the program's folder (the provider host's working directory) the way the
 * program itself resolves `gpu-rental`: installed, linked or in a workspace. A plain `require` would resolve from
 * Pulumi's own module instead, which finds the SDK only when both sit in the same node_modules.
 */
function fromProgram<T>(id: string): T {
  const { createRequire } = require("node:module");
  return createRequire(require("node:path").join(process.cwd(), "pulumi-program.js"))(id);
}
