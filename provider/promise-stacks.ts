/**
 * @pulumi/pulumi captures a stack trace for every promise it makes while a resource registers (debuggablePromise:
 * `new Error().stack`, kept only to describe a promise still pending when the program exits), four per property
 * registered: an Instance of two inputs registers 19 (its 13 outputs seeded), some 80 traces, each formatted by the
 * source-map support the language host installs. That was some 5 ms of CPU per Instance (1 s of a program of 200,
 * measured), where a trivial dynamic resource registers one property. Registering with `Error.stackTraceLimit` at 0 makes those traces empty. The resource's own
 * source position and stack trace, which Pulumi records in the state, are unaffected: Pulumi lifts the limit
 * itself while it reads them (Resource.callsites). With PULUMI_DEBUG_PROMISE_LEAKS set (the one setting that
 * prints those traces), nothing changes.
 */

/** Turns the promise traces off until the function returned is called (a generated class's `finally`). */
export function promiseStacksOff(): () => void {
  if (process.env.PULUMI_DEBUG_PROMISE_LEAKS) return () => {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return () => {
    Error.stackTraceLimit = limit;
  };
}
