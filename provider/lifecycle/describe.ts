import { z } from "zod";
import {
  ADOPT_ID, EnumDescription, FunctionDescription, NamedType, ObjectDescription, PropertyDescription, PropertyMeta, PropertyType, ResourceDescription,
} from "./description";

/**
 * The one derivation of a kind's or a function's description from its zod schemas: each property's JSON type from
 * its zod type, whether it is required from its optionality, and the rest (documentation, secrecy, defaults, the
 * names of enum and object types) from the schemas' metadata (PropertyMeta). A property without a description is
 * refused, naming it: every input and output is documented.
 */

type Shape = Readonly<Record<string, z.core.$ZodType>>;

/** What a kind declares: its zod schemas (inputs: the spec's object or shape), and `adoptId` unless it adopts otherwise. */
export interface KindDeclaration {
  name: string;
  description: string;
  inputs: z.ZodObject | Shape;
  outputs: z.ZodObject | Shape;
  /** The adoptId input it shows: ADOPT_ID unless given, none when false (a kind that adopts by name, or refuses adoptId). */
  adoptId?: z.core.$ZodType | false;
}

/** What a function declares: its arguments, its result (each property an output), and its example. */
export interface FunctionDeclaration {
  name: string;
  description: string;
  args: z.ZodObject | Shape;
  result: z.ZodObject | Shape;
  example: FunctionDescription["example"];
}

export function describeResource(d: KindDeclaration): ResourceDescription {
  const inputs = { ...shapeOf(d.inputs), ...(d.adoptId !== false && { adoptId: d.adoptId ?? ADOPT_ID }) };
  const outputs = shapeOf(d.outputs);
  const where = (what: string) => `${d.name}'s ${what}`;
  return {
    name: d.name,
    description: d.description,
    inputs: describeProperties(inputs, where("input")),
    requiredInputs: requiredOf(inputs),
    outputs: describeProperties(outputs, where("output")),
    requiredOutputs: requiredOf(outputs),
  };
}

export function describeFunction(d: FunctionDeclaration): FunctionDescription {
  const args = shapeOf(d.args);
  const result = shapeOf(d.result);
  return {
    name: d.name,
    description: d.description,
    inputs: describeProperties(args, `${d.name}'s argument`),
    requiredInputs: requiredOf(args),
    outputs: describeProperties(result, `${d.name}'s result`),
    requiredOutputs: requiredOf(result),
    example: d.example,
  };
}

/** A property: its JSON type and what its metadata says. `where` names it in the error of a property left undocumented. */
export function describeProperty(schema: z.core.$ZodType, where: string): PropertyDescription {
  const { core, meta, nullable, defaultValue } = unwrap(schema);
  if (!meta.description) throw new Error(`${where} has no description: give its zod schema .meta({ description })`);
  const fallback = meta.default ?? defaultValue;
  return {
    ...typeOf(core, meta.named, where),
    description: meta.description,
    ...(meta.secret && { secret: true }),
    ...(fallback !== undefined && { default: fallback as string | number | boolean }),
    ...(meta.tsType && { tsType: meta.tsType }),
    ...(nullable && { nullable: true }),
    ...(meta.replaces && { replaces: true }),
  };
}

function describeProperties(shape: Shape, what: string): Record<string, PropertyDescription> {
  return Object.fromEntries(Object.entries(shape).map(([name, schema]) => [name, describeProperty(schema, `${what} ${name}`)]));
}

/**
 * Required: neither optional (nor defaulted, nor any value at all, which may be missing) nor nullable (a null is no
 * value), unless its metadata says the kind fills it in.
 */
function requiredOf(shape: Shape): string[] {
  return Object.entries(shape)
    .filter(([, schema]) => {
      const { core, meta, nullable } = unwrap(schema);
      const optional = schema._zod.optin !== undefined || core._zod.def.type === "unknown" || core._zod.def.type === "any";
      return !optional && !nullable && meta.required !== false;
    })
    .map(([name]) => name);
}

function shapeOf(schema: z.ZodObject | Shape): Shape {
  return schema instanceof z.ZodObject ? schema.shape : schema;
}

/** A schema without its wrappers (optional, nullable, default, ...), and the metadata of every layer, the outer first. */
function unwrap(schema: z.core.$ZodType): { core: z.core.$ZodType; meta: PropertyMeta; nullable: boolean; defaultValue?: unknown } {
  let meta: PropertyMeta = {};
  let nullable = false;
  let defaultValue: unknown;
  for (let layer = schema; ; ) {
    meta = { ...(z.globalRegistry.get(layer) as PropertyMeta | undefined), ...meta };
    const def = layer._zod.def as z.core.$ZodTypeDef & { innerType?: z.core.$ZodType; in?: z.core.$ZodType; defaultValue?: unknown };
    if (def.type === "nullable") nullable = true;
    if (def.type === "default" && defaultValue === undefined) defaultValue = def.defaultValue;
    // A transform's JSON type is what it takes in.
    const inner = def.type === "pipe" ? def.in : WRAPPERS.includes(def.type) ? def.innerType : undefined;
    if (!inner) return { core: layer, meta, nullable, defaultValue };
    layer = inner;
  }
}

/** The zod types that wrap another without changing its JSON type. */
const WRAPPERS: readonly string[] = ["optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch"];

/**
 * The JSON type of an unwrapped schema. An enum or object takes the name `named` gives it (its own metadata's
 * first): unnamed, an enum is a string and an object a map of any JSON value (a Pulumi type needs a name).
 */
function typeOf(core: z.core.$ZodType, outerNamed: NamedType | undefined, where: string): PropertyType {
  const named = (z.globalRegistry.get(core) as PropertyMeta | undefined)?.named ?? outerNamed;
  const def = core._zod.def as z.core.$ZodTypeDef & Record<string, any>;
  switch (def.type) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: (core as z.ZodNumber).isInt ? "integer" : "number" };
    case "boolean":
      return { type: "boolean" };
    case "unknown":
    case "any":
      return { type: "any" };
    case "enum":
      return named ? { type: "string", enum: enumOf(named, Object.values(def.entries as Record<string, string>), where) } : { type: "string" };
    case "array":
      return { type: "array", items: itemOf(def.element, named, where) };
    case "tuple":
      return { type: "array", items: commonType(def.items as z.core.$ZodType[], where) };
    case "record":
      return { type: "map", values: valuesOf(unwrap(def.valueType).core, named, where) };
    case "object":
      return named ? { type: "object", object: objectOf(named, (core as z.ZodObject).shape, where) } : { type: "map", values: { type: "any" } };
    default:
      throw new Error(`${where}: a zod ${def.type} has no JSON type here`);
  }
}

/**
 * A map's values: any JSON value when they are JSON objects themselves (filters, `{ <field>: { <operator>: <value> } }`),
 * as every language takes a map of any more easily than a map of maps.
 */
function valuesOf(core: z.core.$ZodType, named: NamedType | undefined, where: string): PropertyType {
  const type = typeOf(core, named, where);
  return type.type === "map" ? { type: "any" } : type;
}

function itemOf(schema: z.core.$ZodType, named: NamedType | undefined, where: string): PropertyType & { nullable?: boolean } {
  const item = unwrap(schema);
  return { ...typeOf(item.core, item.meta.named ?? named, where), ...(item.nullable && { nullable: true }) };
}

/** A tuple's items as one type: theirs when they all have one (`[field, "asc" | "desc"]`: strings), else any. */
function commonType(items: z.core.$ZodType[], where: string): PropertyType {
  const types = items.map((item) => typeOf(unwrap(item).core, undefined, where));
  const same = types.length > 0 && types.every((t) => JSON.stringify(t) === JSON.stringify(types[0]));
  return same ? types[0] : { type: "any" };
}

function enumOf(named: NamedType, values: readonly string[], where: string): EnumDescription {
  const described = values.map((value) => {
    const description = named.values?.[value];
    if (!description) throw new Error(`${where}: the value ${value} of enum ${named.name} has no description`);
    return { value, description };
  });
  return { name: named.name, description: named.description, values: described };
}

function objectOf(named: NamedType, shape: Shape, where: string): ObjectDescription {
  return { name: named.name, description: named.description, properties: describeProperties(shape, `${where} (${named.name})`), required: requiredOf(shape) };
}
