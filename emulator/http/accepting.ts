import { z } from "zod";

/**
 * What the live service accepts, derived from a schema of what the SDK sends. The SDK sends tidy bodies; real
 * clients (the service's public Python client, curl, generated clients) send looser ones, which the service
 * takes (docs/service-facts.md#requests-real-clients-send):
 *
 * - an optional field sent as `null` is a field not given;
 * - a number may arrive as its decimal text (`"recommended_disk_space": "16"`);
 * - keys the service does not know are ignored, not refused.
 *
 * The result is an ordinary zod schema, so the OpenAPI document (generated from it) shows exactly that: nullable
 * optional fields, numbers or decimal texts, objects open to other keys. Refinements (cross-field rules) of the
 * tidy schema carry over and run on the tidied value.
 */
export function accepting<S extends z.ZodType, F extends Record<string, z.ZodType> = Record<never, z.ZodType>>(
  schema: S,
  options: AcceptingOptions<F> = {},
): z.ZodType<Omit<z.output<S>, keyof F> & { [K in keyof F]: z.output<F[K]> }> {
  type Accepted = z.ZodType<Omit<z.output<S>, keyof F> & { [K in keyof F]: z.output<F[K]> }>;
  if (accepted.has(schema)) return schema as unknown as Accepted;
  if (!(schema instanceof z.ZodObject) && (options.fields || options.optional)) {
    throw new Error("accepting(): fields and optional apply to an object schema");
  }
  const result = schema instanceof z.ZodObject ? loosenObject(schema, options, options.in ?? "body") : loosen(schema, options.in ?? "body");
  accepted.add(result);
  return result as unknown as Accepted;
}

export interface AcceptingOptions<F extends Record<string, z.ZodType> = Record<string, z.ZodType>> {
  /** Fields whose accepted shape is not the tidy one's (combined runtypes, typed search filters). Kept as given. */
  fields?: F;
  /** Required fields of the tidy schema that the service also takes without (it applies defaults). */
  optional?: readonly string[];
  /**
   * `query`: the fields of a query string, where every value is text: a number is any JSON number's text (and
   * documented as the number), and there is no null.
   */
  in?: Where;
}

type Where = "body" | "query";

/** Schemas that already say what is accepted: left as they are (and a second accepting() is a no-op). */
const accepted = new WeakSet<z.ZodType>();

function loosen(schema: z.ZodType, where: Where): z.ZodType {
  if (accepted.has(schema)) return schema;
  if (schema instanceof z.ZodObject) return loosenObject(schema, {}, where);
  if (schema instanceof z.ZodOptional) {
    const inner = loosen(schema.unwrap() as z.ZodType, where);
    // Null is "not given": the field is left out of the value the handler sees. (A query has no null.)
    return where === "query" ? inner.optional() : inner.nullable().optional().transform(absentIfNull);
  }
  if (schema instanceof z.ZodNullable) return loosen(schema.unwrap() as z.ZodType, where).nullable();
  if (schema instanceof z.ZodNumber) return where === "query" ? numberText(schema) : z.union([schema, decimalText(schema)]);
  if (schema instanceof z.ZodArray) return z.array(loosen(schema.element as z.ZodType, where));
  if (schema instanceof z.ZodUnion) {
    return z.union((schema.options as z.ZodType[]).map((option) => loosen(option, where)) as [z.ZodType, z.ZodType, ...z.ZodType[]]);
  }
  return schema;
}

const absentIfNull = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

function loosenObject(schema: z.ZodObject, options: AcceptingOptions<Record<string, z.ZodType>>, where: Where): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const given = options.fields?.[key];
    if (given) shape[key] = given;
    else shape[key] = loosen(options.optional?.includes(key) && !(field instanceof z.ZodOptional) ? field.optional() : field, where);
  }
  for (const [key, field] of Object.entries(options.fields ?? {})) shape[key] ??= field;
  // Unknown keys: a catch-all (filters of fields the market does not know) stays; otherwise they are dropped.
  const catchall = schema._zod.def.catchall;
  let loose: z.ZodObject = z.object(shape);
  if (catchall && !(catchall instanceof z.ZodNever)) loose = loose.catchall(catchall);
  const checks = schema._zod.def.checks ?? [];
  if (checks.length) loose = loose.check(...(checks as never[]));
  // What the tidy schema says of itself in JSON Schema (an atLeastOneOf() rule) goes with its checks.
  const meta = z.globalRegistry.get(schema);
  if (meta) loose = loose.meta(meta);
  // A field sent as null is left out altogether, so `{...current, ...changes}` never writes it over.
  const result = loose.transform(withoutAbsent);
  shapes.set(result, shape);
  return result;
}

const shapes = new WeakMap<z.ZodType, Record<string, z.ZodType>>();

/** The fields of an object schema, or of one accepting() made (for the OpenAPI document's parameters). */
export function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  return shapes.get(schema) ?? (schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : undefined);
}

const withoutAbsent = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Record<string, unknown>;

/** The text of a JSON number, as numbers come in a query string. */
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * A number in a query string: the text of a JSON number, read as that number and held to its checks. The
 * OpenAPI document shows the number itself (a query parameter's value is serialized as text by its clients).
 */
function numberText(number: z.ZodNumber): z.ZodType {
  const text = z.string().regex(JSON_NUMBER, "expected a number").transform(Number).pipe(number);
  documentedAs.set(text, number);
  return text;
}

const documentedAs = new WeakMap<z.ZodType, z.ZodType>();

/** What a query parameter's schema is documented as, when that is not its own shape (a number read from text). */
export function documentedSchema(schema: z.ZodType): z.ZodType {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return documentedAs.get(inner) ?? schema;
}

/**
 * A number's decimal text, read as that number and held to the same checks. The pattern says what the checks
 * allow (no sign for a number that cannot be negative, no fraction for a whole number), so a text that
 * matches it is a number the field takes.
 */
function decimalText(number: z.ZodNumber): z.ZodType {
  const nonNegative = (number.minValue ?? -Infinity) >= 0;
  const positive = nonNegative && number.safeParse(0).success === false;
  const sign = nonNegative ? "" : "-?";
  const whole = positive ? "0{0,15}[1-9]\\d{0,14}" : "\\d{1,15}";
  const fraction = number.isInt ? "" : "(\\.\\d{1,15})?";
  const belowOne = positive && !number.isInt ? "|0{0,15}\\.\\d{0,14}[1-9]\\d{0,14}" : "";
  const pattern = new RegExp(`^${sign}(${whole}${fraction}${belowOne})$`);
  return z.string().regex(pattern).transform(Number).pipe(number);
}

/** An optional field of a shape given to accepting() as it is: `null`, like absence, is "not given". */
export function optionalField<S extends z.ZodType>(schema: S) {
  return schema.nullable().optional().transform(absentIfNull);
}

/**
 * Whether a JSON text is empty: nothing but JSON's own white space (space, tab, line feed, carriage return).
 * Other characters String.trim drops (a form feed, a no-break space) are not JSON, so a text of them is malformed.
 */
export function isBlankJson(text: string): boolean {
  return /^[ \t\n\r]*$/.test(text);
}

/**
 * A query parameter that carries JSON (`select_filters={"name":{"eq":"x"}}`, `order_by=[...]`): the text is
 * decoded, then held to `schema`. The OpenAPI document shows such a parameter with its JSON schema (`content`).
 * An empty text is `empty`.
 */
export function jsonEncoded<S extends z.ZodType>(schema: S, empty?: z.input<S>) {
  const encoded = z
    .string()
    .transform((text, ctx) => {
      if (isBlankJson(text) && empty !== undefined) return empty;
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        ctx.addIssue({ code: "custom", message: `not valid JSON (${(error as Error).message}): send a JSON-encoded value` });
        return z.NEVER;
      }
    })
    .pipe(schema);
  jsonParameters.set(encoded, schema);
  return encoded;
}

const jsonParameters = new WeakMap<z.ZodType, z.ZodType>();

/** The schema of the JSON a query parameter carries, if it is one made by jsonEncoded(). */
export function jsonParameterSchema(schema: z.ZodType): z.ZodType | undefined {
  let inner: z.ZodType = schema;
  while (!jsonParameters.has(inner)) {
    if (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
    else if (inner instanceof z.ZodPipe) inner = inner.in as z.ZodType;
    else return undefined;
  }
  return jsonParameters.get(inner);
}

/** A yes/no query parameter: `true` or `false`, as JSON writes them (the public Python client sends them so). */
export const queryFlag = z.union([z.boolean(), z.enum(["true", "false"]).transform((flag) => flag === "true")]);
