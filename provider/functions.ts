import * as pulumi from "@pulumi/pulumi";
import type { Account } from "./account";

type LifecycleModule = typeof import("./lifecycle");

/** The options of a function: the account it reads (default the provider's, `gpu-rental:apiKey`). */
export interface InvokeOptions {
  account?: Account;
}

/** A function's arguments as the `...Output` form takes them: each may be an output of another resource. */
export type FunctionInputs<A> = { [K in keyof A]: pulumi.Input<A[K]> };

/**
 * Runs a function of the package (`getOffers`, ...) in the program's own process, as the plugin runs it for the
 * other languages: over the settings the dynamic providers use (stack config `gpu-rental:*`, else the
 * environment), its arguments checked first. Read-only: it runs at preview as at `up`.
 */
export function invokeFunction<R>(name: string, args: object, opts: InvokeOptions = {}): Promise<R> {
  // Loaded here, not at the top: a program that calls no function does not load the lifecycle (see KindRegistration).
  const { configureLifecycle }: LifecycleModule = require("./lifecycle");
  const lifecycle = configureLifecycle({ get: (key) => pulumi.runtime.getConfig(key) });
  return lifecycle.invoke(`gpu-rental:index:${name}`, args as Record<string, unknown>, opts.account?.ref) as Promise<R>;
}

/** The `...Output` form of a function: its arguments' outputs resolved first, its result an output. */
export function invokeOutput<R>(name: string, args: object, opts: InvokeOptions = {}): pulumi.Output<R> {
  return pulumi.output(args).apply((resolved) => invokeFunction<R>(name, resolved, opts)) as pulumi.Output<R>;
}
