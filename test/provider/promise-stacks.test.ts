import * as pulumi from "@pulumi/pulumi";
import { Instance } from "../../provider";
import { promiseStacksOff } from "../../provider/promise-stacks";

/**
 * A generated class registers without the stack traces @pulumi/pulumi takes for each of its promises (four per
 * property), but with the trace Pulumi reads for the resource's own source position. Counted where V8 formats
 * every trace (Error.prepareStackTrace), under Pulumi's mocks.
 */
it("registers an Instance with one stack trace (its source position), not one per promise of its properties", async () => {
  await pulumi.runtime.setMocks({ newResource: ({ name, inputs }) => ({ id: `${name}-id`, state: inputs }), call: () => ({}) }, "promise-stacks", "test", false);
  const limit = Error.stackTraceLimit;
  const previous = Error.prepareStackTrace;
  const frames: number[] = [];
  Error.prepareStackTrace = (error, sites) => {
    frames.push(sites.length);
    return [String(error), ...sites.map((site) => `    at ${site}`)].join("\n");
  };
  try {
    const instance = new Instance("i", { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "x" });
    expect(frames.filter((n) => n > 0)).toHaveLength(1);
    expect(frames.length).toBeGreaterThan(60);
    expect(Error.stackTraceLimit).toBe(limit);
    await new Promise<void>((resolve) => instance.urn.apply(() => resolve()));
  } finally {
    Error.prepareStackTrace = previous;
  }
});

it("leaves the traces on when PULUMI_DEBUG_PROMISE_LEAKS asks for them, and restores the limit", () => {
  const limit = Error.stackTraceLimit;
  process.env.PULUMI_DEBUG_PROMISE_LEAKS = "1";
  try {
    promiseStacksOff();
    expect(Error.stackTraceLimit).toBe(limit);
  } finally {
    delete process.env.PULUMI_DEBUG_PROMISE_LEAKS;
  }
  const restore = promiseStacksOff();
  expect(Error.stackTraceLimit).toBe(0);
  restore();
  expect(Error.stackTraceLimit).toBe(limit);
});
