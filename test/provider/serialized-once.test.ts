import * as pulumi from "@pulumi/pulumi";
import { Account, Instance, Template } from "../../provider";
import { PROVIDER, SdkProvider } from "../../provider/sdk-provider";

/**
 * A program of many resources serializes the provider once: @pulumi/pulumi caches a provider's serialized closure
 * by the provider object, and every gpu-rental resource, of every kind and account, is registered with the one
 * `PROVIDER`. Under Pulumi's mocks, which run the program's registrations (serialization included) without an
 * engine; test/package/many-instances.test.ts shows what the real engine stores and the real host loads.
 */
const closure = require("@pulumi/pulumi/runtime/closure/serializeClosure");

it("registers 60 resources of two kinds and two accounts with one serialization, the same __provider in each", async () => {
  const providers: unknown[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource: ({ name, inputs }) => {
        providers.push(inputs.__provider);
        return { id: `${name}-id`, state: inputs };
      },
      call: () => ({}),
    },
    "serialized-once",
    "test",
    false,
  );
  const serializations = jest.spyOn(closure, "serializeFunction");
  process.env.SERIALIZED_ONCE_TEAM_KEY = "team-key-never-serialized";
  const team = new Account("team", { apiKeyEnv: "SERIALIZED_ONCE_TEAM_KEY" });
  const made = [
    ...Array.from({ length: 40 }, (_, i) => new Instance(`i${i}`, { image: "pytorch/pytorch", label: `i${i}` })),
    ...Array.from({ length: 10 }, (_, i) => new Instance(`t${i}`, { image: "pytorch/pytorch" }, { account: team })),
    ...Array.from({ length: 10 }, (_, i) => new Template(`tpl${i}`, { name: `tpl${i}`, image: "pytorch/pytorch" })),
  ];
  await Promise.all(made.map((resource) => new Promise((resolve) => resource.urn.apply(resolve))));

  expect(serializations).toHaveBeenCalledTimes(1);
  expect(providers).toHaveLength(60);
  expect(new Set(providers).size).toBe(1);
  const [text] = providers as string[];
  expect(text).toMatch(/^exports\.handler = /);
  expect(text).not.toContain("team-key-never-serialized");
  serializations.mockRestore();
});

it("is a constant of one method, frozen, small in every layout; the copy a host deserializes is its own, for configure to give the rest", async () => {
  expect(Object.isFrozen(PROVIDER)).toBe(true);
  expect(Object.keys(PROVIDER)).toEqual(["configure"]);
  const { text } = await pulumi.runtime.serializeFunction(() => PROVIDER, { allowSecrets: true });
  // Written out by value here (the repository is no program's node_modules), as in a linked or workspace program.
  expect(text.length).toBeLessThan(1_000);
  const module = { exports: {} as { handler: () => SdkProvider } };
  new Function("module", "exports", "require", text)(module, module.exports, require);
  const copy = module.exports.handler();
  expect(copy).not.toBe(PROVIDER);
  expect(Object.isFrozen(copy)).toBe(false);
  expect(Object.keys(copy)).toEqual(["configure"]);
});
