import * as pulumi from "@pulumi/pulumi";
import { Account, Instance, Template } from "../../provider";
import { PROVIDER_MODULE } from "../../provider/sdk-provider";

/**
 * Every gpu-rental resource is registered with the provider's module text (PROVIDER_MODULE) in `__provider`, as
 * pulumi.dynamic.Resource would register a serialized provider, but with nothing serialized in the program. Under
 * Pulumi's mocks, which run the program's registrations without an engine; test/package/many-instances.test.ts
 * shows what the real engine stores and the real host loads.
 */
const closure = require("@pulumi/pulumi/runtime/closure/serializeClosure");

it("registers 60 resources of two kinds and two accounts with no serialization, the provider's module in each, typed as dynamic resources are", async () => {
  const registered: { type: string; provider: unknown }[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource: ({ type, name, inputs }) => {
        registered.push({ type, provider: inputs.__provider });
        return { id: `${name}-id`, state: inputs };
      },
      call: () => ({}),
    },
    "provider-module",
    "test",
    false,
  );
  const serializations = jest.spyOn(closure, "serializeFunction");
  process.env.PROVIDER_MODULE_TEAM_KEY = "team-key-never-registered";
  const team = new Account("team", { apiKeyEnv: "PROVIDER_MODULE_TEAM_KEY" });
  const made = [
    ...Array.from({ length: 40 }, (_, i) => new Instance(`i${i}`, { image: "pytorch/pytorch", label: `i${i}` })),
    ...Array.from({ length: 10 }, (_, i) => new Instance(`t${i}`, { image: "pytorch/pytorch" }, { account: team })),
    ...Array.from({ length: 10 }, (_, i) => new Template(`tpl${i}`, { name: `tpl${i}`, image: "pytorch/pytorch" })),
  ];
  // A dynamic resource of Pulumi's own, for the type it is given (its provider is serialized: spied on and counted).
  class Own extends pulumi.dynamic.Resource {}
  const own = new Own({ create: async () => ({ id: "x" }) }, "own", {}, {}, "gpu-rental", "Instance");
  await Promise.all([...made, own].map((resource) => new Promise((resolve) => resource.urn.apply(resolve))));

  expect(serializations).toHaveBeenCalledTimes(1);
  const ours = registered.filter((r) => r.provider === PROVIDER_MODULE);
  expect(ours).toHaveLength(60);
  expect(new Set(ours.map((r) => r.type))).toEqual(new Set(["pulumi-nodejs:dynamic/gpu-rental:Instance", "pulumi-nodejs:dynamic/gpu-rental:Template"]));
  expect(registered.find((r) => r.provider !== PROVIDER_MODULE)?.type).toBe("pulumi-nodejs:dynamic/gpu-rental:Instance");
  expect(PROVIDER_MODULE).not.toContain("team-key-never-registered");
  serializations.mockRestore();
});

it("is a module whose handler answers one provider of one method, configure, for a host to load once and configure", () => {
  expect(PROVIDER_MODULE.length).toBeLessThan(1_000);
  const module = { exports: {} as { handler: () => Record<string, unknown> } };
  new Function("module", "exports", "require", PROVIDER_MODULE)(module, module.exports, require);
  const provider = module.exports.handler();
  expect(module.exports.handler()).toBe(provider);
  expect(Object.keys(provider)).toEqual(["configure"]);
  expect(typeof provider.configure).toBe("function");
});
