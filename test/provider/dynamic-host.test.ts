import { DynamicHost, ProviderHost } from "../helpers/provider-host";

/**
 * The toolchain's dynamic-provider plugin (provider/dynamic-host.ts) against @pulumi/pulumi's own, the judge:
 * the same provider (not gpu-rental's: any program's own dynamic resource), the same requests, the same answers,
 * errors included. gpu-rental's own provider runs through the toolchain's plugin in every engine test.
 */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const SECRET = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "s3cret" };

/** A program's own provider, every method of it answering from its arguments and the stack's config. */
const full = {
  async configure(req: any) {
    (this as any).greeting = `${req.config.get("greeting")}/${req.config.require("other:key")}`;
  },
  async check(_olds: any, news: any) {
    if (news.size === "huge") return { inputs: news, failures: [{ property: "size", reason: "too big" }] };
    if (news.size === "throw") throw new Error("check exploded");
    return { inputs: { ...news, greeting: (this as any).greeting, checked: true } };
  },
  async diff(_id: string, olds: any, news: any) {
    if (olds.size === news.size) return { changes: false };
    return { changes: true, replaces: news.region !== olds.region ? ["region"] : [], deleteBeforeReplace: news.region !== olds.region };
  },
  async create(inputs: any) {
    if (inputs.size === "half") throw Object.assign(new Error("made, not started"), { id: "half-1", properties: { state: "broken" }, reasons: ["boot failed"] });
    if (inputs.size === "none") throw new Error("refused outright");
    return { id: `made-${inputs.size}`, outs: { size: inputs.size, greeting: inputs.greeting } };
  },
  async read(id: string, props: any) {
    if (id === "gone") return {};
    return { id, props: { ...props, seen: true }, inputs: { size: props.size } };
  },
  async update(_id: string, _olds: any, news: any) {
    if (news.size === "half") throw Object.assign(new Error("updated halfway"), { id: "u-1", properties: { size: "old" } });
    return { outs: { size: news.size, updated: true } };
  },
  async delete(id: string) {
    if (id === "stuck") throw new Error("cannot delete");
  },
};
/** One with create alone: the host answers every other method in its place. */
const bare = { async create(inputs: any) { return { id: "bare", outs: inputs }; } };

const CONFIG = { "proj:greeting": "hello", "other:key": SECRET, __provider: "ignored" };
const ENV = { ...process.env, PULUMI_NODEJS_PROJECT: "proj" };

/** What both hosts answered to each call of `script`, in order. */
async function answers(provider: object, script: () => [string, Record<string, unknown>][]) {
  const started = await Promise.all((["gpu-rental", "@pulumi/pulumi"] as DynamicHost[]).map((name) => ProviderHost.start(provider, "Thing", undefined, name, ENV)));
  try {
    const [ours, theirs] = await Promise.all(started.map(async (host) => {
      const seen: unknown[] = [];
      for (const [method, fields] of script()) seen.push([method, await host.answerOf(method, host.request(method, fields))]);
      return seen;
    }));
    return { ours, theirs };
  } finally {
    started.forEach((host) => host.stop());
  }
}

it("answers a program's own provider as @pulumi/pulumi's plugin does: config, checks, diffs, creations, reads, updates, deletions, failures", async () => {
  const { ours, theirs } = await answers(full, () => [
    ["configure", { args: CONFIG }],
    ["check", { olds: {}, news: { size: "small" } }],
    ["check", { olds: {}, news: { size: "huge" } }],
    ["check", { olds: {}, news: { size: "throw" } }],
    ["check", { olds: { size: "small" }, news: { size: "small", __provider: UNKNOWN } }],
    ["diff", { id: "made-small", olds: { size: "small", region: "eu" }, news: { size: "small", region: "eu" } }],
    ["diff", { id: "made-small", olds: { size: "small", region: "eu" }, news: { size: "large", region: "us" } }],
    ["create", { properties: { size: "small", greeting: "x" } }],
    ["create", { properties: { size: "half" } }],
    ["create", { properties: { size: "none" } }],
    ["read", { id: "made-small", properties: { size: "small" } }],
    ["read", { id: "gone", properties: { size: "small" } }],
    ["update", { id: "made-small", olds: { size: "small" }, news: { size: "large" } }],
    ["update", { id: "made-small", olds: { size: "small" }, news: { size: "half" } }],
    ["delete", { id: "made-small", properties: { size: "small" } }],
    ["delete", { id: "stuck", properties: { size: "small" } }],
    ["getPluginInfo", {}],
  ]);
  // Guards against two hosts that agree by failing alike.
  expect(ours[1]).toMatchObject(["check", { answer: { inputs: { fieldsMap: expect.arrayContaining([["greeting", { stringValue: "hello/s3cret" }]]) } } }]);
  expect(ours[8]).toMatchObject(["create", { error: { details: "made, not started", initFailure: [expect.objectContaining({ id: "half-1", reasonsList: ["boot failed"] })] } }]);
  expect(ours).toEqual(theirs);
});

it("answers a provider with create alone as @pulumi/pulumi's plugin does", async () => {
  const { ours, theirs } = await answers(bare, () => [
    ["check", { olds: {}, news: { size: "small" } }],
    ["diff", { id: "bare", olds: { size: "small" }, news: { size: "large" } }],
    ["create", { properties: { size: "small" } }],
    ["read", { id: "bare", properties: { size: "small" } }],
    ["update", { id: "bare", olds: { size: "small" }, news: { size: "large" } }],
    ["delete", { id: "bare", properties: { size: "small" } }],
  ]);
  expect(ours.every((call: any) => call[1].answer)).toBe(true);
  expect(ours).toEqual(theirs);
});
