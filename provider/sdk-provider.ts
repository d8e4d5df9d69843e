import * as pulumi from "@pulumi/pulumi";
import type { ResourceFunctions, ResourceKind } from "../sdk";
import { sdk, UNKNOWN } from "./sdk";

/**
 * The dynamic provider of one resource kind. It is serialized into the stack and re-loaded in the provider host,
 * so it holds nothing but the kind's name and no logic: each method loads the SDK (from the program's
 * node_modules) and calls one function of it (`RESOURCE_FUNCTIONS[kind]`). The API key reaches the SDK through
 * `configure` (stack config) or the environment, never through resource inputs, so it is never written to state.
 */
export class SdkProvider implements pulumi.dynamic.ResourceProvider {
  constructor(readonly kind: ResourceKind) {}

  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    sdk().configureFromStackConfig(req.config);
  }

  async check(olds: any, news: any): Promise<pulumi.dynamic.CheckResult> {
    return functionsOf(this.kind).check(news, UNKNOWN);
  }

  async diff(id: string, olds: any, news: any): Promise<pulumi.dynamic.DiffResult> {
    return functionsOf(this.kind).diff(olds, news, UNKNOWN);
  }

  async create(inputs: any): Promise<pulumi.dynamic.CreateResult> {
    return functionsOf(this.kind).create(inputs);
  }

  async read(id: string, props: any): Promise<pulumi.dynamic.ReadResult> {
    const state = await functionsOf(this.kind).read(id, props);
    // No id: the thing is gone, and refresh drops it from the stack.
    return state ? { id, props: state } : {};
  }

  async update(id: string, olds: any, news: any): Promise<pulumi.dynamic.UpdateResult> {
    const { update } = functionsOf(this.kind);
    if (!update) throw new Error(`${this.kind} ${id} cannot change in place: its provider's diff should have asked for a replacement.`);
    return { outs: await update(id, olds, news) };
  }

  async delete(id: string): Promise<void> {
    await functionsOf(this.kind).delete(id);
  }
}

function functionsOf(kind: ResourceKind): ResourceFunctions {
  return sdk().RESOURCE_FUNCTIONS[kind];
}
