import type * as pulumi from "@pulumi/pulumi";
import { warnEngine } from "./engine-log";
import { configureLifecycle, kindOfUrn, ProcessStop, ResourceFunctions, UNKNOWN } from "./lifecycle";

type Methods = Omit<Required<pulumi.dynamic.ResourceProvider>, "configure">;

/**
 * The provider a host loaded from PROVIDER_MODULE (provider/sdk-provider.ts), configured: its methods, given to it
 * by its `configure` (which the host calls as it loads it, before any other), over one context (clients, offer
 * claims, spend queue, the process's stop) for all the program's resources and accounts. Loaded in the host from
 * the program's gpu-rental: the module each resource's `__provider` holds is the `configure` alone.
 * Synchronous, as `configure` must be (see PROVIDER_MODULE).
 *
 * Each method calls one function of the kind the resource's URN names (`__urn`, an input of every resource and
 * kept in its outputs). Keys reach the lifecycle through `configure` (stack config) or the environment, never
 * through inputs, so no key is written to state.
 */
export function configured(provider: object, req: pulumi.dynamic.ConfigureRequest): void {
  const stop = new ProcessStop();
  const lifecycle = configureLifecycle(req.config, { stop });
  // A signal to this process (a cancelled CI job) interrupts the creations under way, which answer with what they made.
  stop.onSignals();
  const functions = (props: any): ResourceFunctions => lifecycle.resource(kindOfUrn(String(props.__urn ?? "")));
  const methods: Methods = {
    /** Also warns, as the engine's own warning, what preview can tell of a creation (a spend cap that will refuse it). */
    async check(olds, news) {
      const fns = functions(news);
      // Sent without the URN (the host's warnings have none): the warning names the resource itself.
      const ahead = await fns.lookAhead(olds, news, UNKNOWN, news.__urn);
      await warnEngine(ahead.warnings);
      const checked = fns.check(news, UNKNOWN, olds, news.__urn);
      return { ...checked, failures: [...checked.failures, ...ahead.failures] };
    },
    async diff(id, olds, news) {
      return functions(news).diff(id, olds, news, UNKNOWN);
    },
    /** The resource's URN comes as an input (the host gives `create` none): the creation's tokens are derived from it. */
    async create(inputs) {
      try {
        const { id, outs } = await functions(inputs).create(inputs, inputs.__urn);
        return { id, outs: withUrn(outs, inputs) };
      } catch (error) {
        throw withProvider(error, inputs);
      }
    },
    async read(id, props) {
      const state = await functions(props).read(id, props);
      // No id: the thing is gone, and refresh drops it from the stack.
      return state ? { id, props: withUrn(state, props) } : {};
    },
    async update(id, olds, news) {
      try {
        return { outs: withUrn(await functions(news).update(id, olds, news, news.__urn), news) };
      } catch (error) {
        throw withProvider(error, news);
      }
    },
    async delete(id, props) {
      await functions(props).delete(id, props);
    },
  };
  Object.assign(provider, methods);
}

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
