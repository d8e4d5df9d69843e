import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { describeFunction, describeResource, FUNCTIONS, Kind, KINDS, PropertyType, registryOf, secretsOf, specOf } from "../../provider/lifecycle";
import { generatedFiles } from "../../release/generate/generate";
import { packageSchema } from "../../provider/schema/schema";
import { REPO_ROOT } from "../helpers/paths";

/**
 * The one derivation of a kind's description from its zod schemas (provider/lifecycle/describe.ts): each zod type
 * gives its JSON type, the metadata the rest, and a secret stays secret through whatever wraps it.
 */

const COLOUR = { name: "Colour", description: "A colour.", values: { red: "Red.", blue: "Blue." } };

/** A kind of every type of property the derivation knows, declared as kinds are: zod schemas and their metadata. */
const ProbeSpec = z.object({
  name: z.string().min(1).meta({ replaces: true, description: "A string, required." }),
  count: z.int().optional().meta({ description: "An integer (z.int)." }),
  size: z.number().int().positive().optional().meta({ description: "An integer (.int())." }),
  ratio: z.number().optional().meta({ default: 0.5, description: "A number, its default said." }),
  enabled: z.boolean().default(true).meta({ description: "A boolean, its default zod's." }),
  colour: z.enum(["red", "blue"]).optional().meta({ named: COLOUR, tsType: "Colour", description: "A named enum." }),
  mode: z.enum(["fast", "slow"]).optional().meta({ description: "An enum without a name: a string." }),
  tags: z.array(z.string()).optional().meta({ description: "A list." }),
  order: z.array(z.tuple([z.string(), z.enum(["asc", "desc"])])).optional().meta({ description: "A list of pairs." }),
  labels: z.record(z.string(), z.string()).optional().meta({ description: "A map." }),
  filters: z.record(z.string(), z.object({ eq: z.unknown() })).optional().meta({ description: "A map of JSON objects." }),
  query: z.object({ limit: z.int() }).catchall(z.unknown()).optional().meta({ tsType: "Query", description: "An object without a name." }),
  mount: z
    .object({ path: z.string().meta({ description: "Where." }), volumeId: z.int().optional().meta({ description: "Which." }) })
    .optional()
    .meta({ named: { name: "Mount", description: "A mount." }, description: "A named object." }),
  extra: z.unknown().meta({ description: "Any JSON value." }),
  password: z.string().min(1).meta({ secret: true, description: "A secret." }),
  token: z.string().meta({ secret: true, description: "A secret, refined after its metadata." }).min(8).optional(),
  prefix: z.string().min(1).meta({ required: false, description: "Filled in by the kind's check when left out." }),
  directory: z.string().nullable().optional().meta({ description: "May be null." }),
});

const ProbeOutputs = z.object({
  probeId: z.int().meta({ description: "Always there." }),
  status: z.string().nullable().meta({ description: "May be null." }),
  keys: z.array(z.string().nullable()).meta({ secret: true, description: "Secret, items may be null." }),
  rows: z.array(z.object({ id: z.int().meta({ description: "Its id." }), note: z.string().nullable().meta({ description: "A note." }) })).meta({
    named: { name: "ProbeRow", description: "A row." },
    description: "Rows.",
  }),
});

const PROBE: Kind = {
  description: describeResource({ name: "Probe", description: "A kind of every property type.", inputs: ProbeSpec, outputs: ProbeOutputs }),
  spec: specOf("Probe", ProbeSpec),
  diff: () => ({ changes: false, replaces: [], deleteBeforeReplace: false }),
  create: async () => ({ id: "1", outs: {} }),
  adopt: async (id) => ({ id, outs: {} }),
  read: async () => null,
  import: async () => null,
  delete: async () => undefined,
};

describe("a kind's description, derived from its zod schemas", () => {
  const d = PROBE.description;

  it("gives each zod type its JSON type, and takes the rest from the metadata", () => {
    expect(d.inputs).toEqual({
      name: { type: "string", replaces: true, description: "A string, required." },
      count: { type: "integer", description: "An integer (z.int)." },
      size: { type: "integer", description: "An integer (.int())." },
      ratio: { type: "number", default: 0.5, description: "A number, its default said." },
      enabled: { type: "boolean", default: true, description: "A boolean, its default zod's." },
      colour: {
        type: "string",
        enum: { name: "Colour", description: "A colour.", values: [{ value: "red", description: "Red." }, { value: "blue", description: "Blue." }] },
        tsType: "Colour",
        description: "A named enum.",
      },
      mode: { type: "string", description: "An enum without a name: a string." },
      tags: { type: "array", items: { type: "string" }, description: "A list." },
      order: { type: "array", items: { type: "array", items: { type: "string" } }, description: "A list of pairs." },
      labels: { type: "map", values: { type: "string" }, description: "A map." },
      filters: { type: "map", values: { type: "any" }, description: "A map of JSON objects." },
      query: { type: "map", values: { type: "any" }, tsType: "Query", description: "An object without a name." },
      mount: {
        type: "object",
        object: {
          name: "Mount",
          description: "A mount.",
          properties: { path: { type: "string", description: "Where." }, volumeId: { type: "integer", description: "Which." } },
          required: ["path"],
        },
        description: "A named object.",
      },
      extra: { type: "any", description: "Any JSON value." },
      password: { type: "string", secret: true, description: "A secret." },
      token: { type: "string", secret: true, description: "A secret, refined after its metadata." },
      prefix: { type: "string", description: "Filled in by the kind's check when left out." },
      directory: { type: "string", nullable: true, description: "May be null." },
      adoptId: expect.objectContaining({ type: "integer", description: expect.stringMatching(/^Adopt an object that already exists/) }),
    });
    // Required: neither optional (nor defaulted) nor nullable, nor filled in by the check.
    expect(d.requiredInputs).toEqual(["name", "password"]);
    expect(d.outputs).toEqual({
      probeId: { type: "integer", description: "Always there." },
      status: { type: "string", nullable: true, description: "May be null." },
      keys: { type: "array", items: { type: "string", nullable: true }, secret: true, description: "Secret, items may be null." },
      rows: {
        type: "array",
        items: {
          type: "object",
          object: {
            name: "ProbeRow",
            description: "A row.",
            properties: { id: { type: "integer", description: "Its id." }, note: { type: "string", nullable: true, description: "A note." } },
            required: ["id"],
          },
        },
        description: "Rows.",
      },
    });
    expect(d.requiredOutputs).toEqual(["probeId", "keys", "rows"]);
  });

  it("makes the schema's properties, types and required lists of it", () => {
    const schema = packageSchema(undefined, registryOf([PROBE])) as any;
    const probe = schema.resources["gpu-rental:index:Probe"];
    expect(probe.inputProperties.colour).toEqual({ $ref: "#/types/gpu-rental:index:Colour", description: "A named enum." });
    expect(probe.inputProperties.enabled).toEqual({ type: "boolean", description: "A boolean, its default zod's.", default: true });
    expect(probe.inputProperties.order).toEqual({ type: "array", items: { type: "array", items: { type: "string" } }, description: "A list of pairs." });
    expect(probe.inputProperties.query).toEqual({ type: "object", additionalProperties: { $ref: "pulumi.json#/Any" }, description: "An object without a name." });
    expect(probe.inputProperties.password).toEqual({ type: "string", description: "A secret.", secret: true });
    // What replaces is said for the docs only: no SDK asks the engine to replace (the kind's diff does).
    expect(probe.inputProperties.name).toEqual({ type: "string", description: "A string, required.", willReplaceOnChanges: true });
    expect(JSON.stringify(schema)).not.toContain('"replaceOnChanges"');
    expect(generatedFiles(registryOf([PROBE]))["docs/reference.md"]).toContain("| `name` | string | required, replaces | A string, required. |");
    expect(probe.requiredInputs).toEqual(["name", "password"]);
    expect(probe.required).toEqual(["name", "password", "probeId", "keys", "rows"]);
    expect(schema.types["gpu-rental:index:Colour"].enum).toEqual([
      { name: "Red", value: "red", description: "Red." },
      { name: "Blue", value: "blue", description: "Blue." },
    ]);
    expect(schema.types["gpu-rental:index:Mount"]).toMatchObject({ type: "object", required: ["path"] });
    expect(schema.types["gpu-rental:index:ProbeRow"].properties.note).toEqual({ type: "string", description: "A note." });
  });

  it("keeps a secret secret through what wraps it: the schema, the TypeScript class's registration and the plugin's marking", () => {
    expect(secretsOf(d)).toEqual(["password", "token", "keys"]);
    const files = generatedFiles(registryOf([PROBE]));
    expect(files["provider/generated/resources.ts"]).toContain('secretInputs: ["password", "token"], secrets: ["password", "token", "keys"]');
    const schema = JSON.parse(files["schema.json"]).resources["gpu-rental:index:Probe"];
    const secret = (props: Record<string, { secret?: boolean }>) => Object.keys(props).filter((name) => props[name].secret);
    expect(secret(schema.inputProperties)).toEqual(["password", "token"]);
    expect(secret(schema.properties)).toEqual(["password", "token", "keys"]);
    // Metadata put before or after optional, a refinement or a transform is found alike.
    const wrapped = z.object({
      a: z.string().meta({ secret: true, description: "a" }).optional(),
      b: z.string().optional().meta({ secret: true, description: "b" }),
      c: z.string().meta({ secret: true, description: "c" }).min(1).nullable(),
      d: z.string().meta({ secret: true, description: "d" }).transform((text) => text.trim()),
    });
    expect(secretsOf(describeResource({ name: "Wrapped", description: "w", inputs: wrapped, outputs: {} }))).toEqual(["a", "b", "c", "d"]);
  });

  it("shows adoptId unless the kind says otherwise, in the words it gives", () => {
    const inputs = z.object({ name: z.string().meta({ description: "n" }) });
    const without = describeResource({ name: "K", description: "k", inputs, outputs: {}, adoptId: false });
    expect(Object.keys(without.inputs)).toEqual(["name"]);
    const own = describeResource({ name: "K", description: "k", inputs, outputs: {}, adoptId: z.int().optional().meta({ description: "Its own words." }) });
    expect(own.inputs.adoptId).toEqual({ type: "integer", description: "Its own words." });
  });

  it("refuses a property without a description, an enum value without one, and a zod type with no JSON type, naming them", () => {
    const declare = (inputs: z.ZodObject) => describeResource({ name: "Bad", description: "b", inputs, outputs: {} });
    expect(() => declare(z.object({ name: z.string() }))).toThrow("Bad's input name has no description");
    expect(() => declare(z.object({ mount: z.object({ path: z.string() }).meta({ named: { name: "M", description: "m" }, description: "m" }) }))).toThrow(
      "Bad's input mount (M) path has no description",
    );
    expect(() => declare(z.object({ colour: z.enum(["red", "green"]).meta({ named: COLOUR, description: "c" }) }))).toThrow(
      "the value green of enum Colour has no description",
    );
    expect(() => declare(z.object({ when: z.date().meta({ description: "w" }) }))).toThrow("Bad's input when: a zod date has no JSON type here");
    expect(() => describeFunction({ name: "getBad", description: "b", args: {}, result: { n: z.int() }, example: { args: {}, exports: "n" } })).toThrow(
      "getBad's result n has no description",
    );
  });
});

describe("the package's kinds and functions", () => {
  it("describe exactly the inputs each kind's lifecycle validates (its spec's), and adoptId where they show it", () => {
    for (const { description, spec } of KINDS) {
      // A fleet adopts its members by index (adoptIds, one of its own inputs); a variable of the account, a team and a
      // member by their name or email (declaring it takes it over), not by adoptId.
      const adopts = ["GpuFleet", "EnvVar", "Team", "TeamMember"].includes(description.name) ? [] : ["adoptId"];
      expect({ kind: description.name, inputs: Object.keys(description.inputs) }).toEqual({ kind: description.name, inputs: [...spec.keys, ...adopts] });
    }
    for (const { description, args } of FUNCTIONS) {
      expect({ name: description.name, inputs: Object.keys(description.inputs) }).toEqual({ name: description.name, inputs: [...args.keys] });
    }
  });

  it("say an input replaces the resource only where the kind's diff replaces it for a change", async () => {
    for (const { description, diff } of KINDS) {
      for (const [input, p] of Object.entries(description.inputs).filter(([, q]) => q.replaces)) {
        const [before, after] = samplesOf(p);
        const kind = description.name;
        for (const olds of [{ [input]: before }, {}]) {
          const { replaces } = await diff(olds, { [input]: after });
          expect({ kind, input, olds, replaced: replaces.includes(input) }).toEqual({ kind, input, olds, replaced: true });
        }
      }
    }
  });

  it("are declared as zod schemas only: no module of provider/lifecycle/ writes a JSON type or a description table", () => {
    const folder = path.join(REPO_ROOT, "provider", "lifecycle");
    const written = fs
      .readdirSync(folder)
      .filter((file) => file.endsWith(".ts") && !["describe.ts", "description.ts"].includes(file))
      .flatMap((file) => {
        const text = fs.readFileSync(path.join(folder, file), "utf8");
        const found = text.match(/\btype: "(string|integer|number|boolean|array|map|object|any)"|\b(Resource|Function|Object|Property|Enum)Description = \{/g) ?? [];
        return found.map((what) => `${file}: ${what}`);
      });
    expect(written).toEqual([]);
  });
});

/** Two different values of a property's type (the second never a default: a string's `two`, an enum's second value). */
function samplesOf(p: PropertyType): [unknown, unknown] {
  switch (p.type) {
    case "string":
      return p.enum ? [p.enum.values[0].value, p.enum.values[1].value] : ["one", "two"];
    case "integer":
      return [1, 2];
    case "number":
    case "any":
      return [1.5, 2.5];
    case "boolean":
      return [false, true];
    case "array": {
      const [a, b] = samplesOf(p.items);
      return [[a], [b]];
    }
    case "map": {
      const [a, b] = samplesOf(p.values);
      return [{ key: a }, { key: b }];
    }
    case "object": {
      const fields = Object.entries(p.object.properties).map(([name, q]) => [name, samplesOf(q)] as const);
      return [Object.fromEntries(fields.map(([name, [a]]) => [name, a])), Object.fromEntries(fields.map(([name, [, b]]) => [name, b]))];
    }
  }
}
