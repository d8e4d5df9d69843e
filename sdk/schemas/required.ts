import { z } from "zod";

/**
 * `schema` with at least one of `keys` given (the spec's "either image or template_hash_id"). The rule is
 * written once and said twice: as a zod refinement, which checks it, and as JSON Schema (`anyOf` of the keys
 * each required and not null), which the OpenAPI document shows.
 */
export function atLeastOneOf<S extends z.ZodObject>(schema: S, keys: readonly string[], message: string, path: string[] = [keys[0]]) {
  return schema
    .refine((value) => keys.some((key) => (value as Record<string, unknown>)[key] !== undefined), { message, path })
    .meta({ anyOf: keys.map((key) => ({ required: [key], properties: { [key]: { not: { type: "null" } } } })) });
}
