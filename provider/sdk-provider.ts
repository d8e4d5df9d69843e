import type * as pulumi from "@pulumi/pulumi";

type Methods = Required<pulumi.dynamic.ResourceProvider>;

/**
 * The dynamic provider of every gpu-rental resource kind. Pulumi serializes it into each resource's `__provider`
 * input (which the engine keeps in the state, in inputs and outputs, rewritten at each step of an update) and
 * re-loads it in the provider host, a separate process. So it is as small as it can be: it holds no logic, names
 * no kind and no account, and has one method, `configure`, which the host calls as it loads it, before any other:
 * that gives the host's copy its methods and its one context for all the program's resources
 * (provider/dynamic-provider.ts, loaded from the program's own gpu-rental). Every resource serializes it alike and
 * the host loads it once.
 *
 * Serialization copies the method's text and what it refers to, and a module it refers to is written as a
 * `require` of its package path, which fails when the package sits in a program's node_modules and its `exports`
 * hide that file. So it refers to no module of its own: the methods' module is resolved from the program's folder
 * (the host's working directory) the way the program itself resolves `gpu-rental` (installed, linked or in a
 * workspace), not from Pulumi's module, which finds it only when both sit in the same node_modules.
 */
export class SdkProvider implements pulumi.dynamic.ResourceProvider {
  // Declared, not fields: what `configure` gives the host's copy.
  declare check: Methods["check"];
  declare diff: Methods["diff"];
  declare create: Methods["create"];
  declare read: Methods["read"];
  declare update: Methods["update"];
  declare delete: Methods["delete"];

  /**
   * Gives the methods before it returns, with no await: the host caches its copy before it awaits `configure`, so
   * a call that comes meanwhile finds the copy in its cache, and must find the methods on it too.
   */
  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    require("node:module").createRequire(`${process.cwd()}/`)("gpu-rental/provider/dynamic-provider").configured(this, req);
  }
}

/**
 * The provider every gpu-rental resource class is registered with. @pulumi/pulumi caches a provider's serialized
 * closure by the provider object (a WeakMap of its `dynamic` module), so one object for all resources makes one
 * serialization a program, not one a resource (some 70 ms each on a busy machine), and one `__provider` text that
 * the host loads once. It carries nothing of a program or an account, and it is frozen: a constant, not module
 * state (the copy the host deserializes is a new object, which `configure` sets up).
 */
export const PROVIDER: SdkProvider = Object.freeze({ configure: SdkProvider.prototype.configure }) as SdkProvider;
