/**
 * The dynamic provider of every gpu-rental resource kind, as the engine keeps it in each resource's `__provider`
 * input: the text of a module whose `handler()` answers the provider, which a provider host (the toolchain's,
 * provider/dynamic-host.ts, or @pulumi/pulumi's own under a user's Pulumi) loads once per text and configures
 * before any other call.
 *
 * The provider holds no logic, names no kind and no account, and has one method, `configure`, which gives the
 * host's copy its methods and its one context for all the program's resources (provider/dynamic-provider.ts),
 * with no await: the host caches the copy before it awaits `configure`, so a call that comes meanwhile must find
 * the methods on it. That module is resolved from the program's folder (the host's working directory) the way
 * the program itself resolves `gpu-rental` (installed, linked or in a workspace).
 *
 * It is written here as text rather than made by pulumi.dynamic.Resource, which serializes a provider object's
 * closure in every program run (read through the inspector, a cost in CPU: docs/benchmarks.md) before the first
 * resource is registered, for the same few lines every time.
 */
export const PROVIDER_MODULE = [
  '"use strict";',
  "const provider = {",
  "  async configure(req) {",
  '    require("node:module").createRequire(`${process.cwd()}/`)("gpu-rental/provider/dynamic-provider").configured(this, req);',
  "  },",
  "};",
  "exports.handler = () => provider;",
  "",
].join("\n");

/** The key of the provider's module text in every dynamic resource's inputs. */
export const PROVIDER_KEY = "__provider";

/** The type of a kind's resources, as pulumi.dynamic.Resource names a dynamic resource of module `gpu-rental`. */
export function dynamicType(kind: string): string {
  return `pulumi-nodejs:dynamic/gpu-rental:${kind}`;
}
