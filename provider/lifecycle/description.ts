import { z } from "zod";

/**
 * The description of each resource kind and function, as plain data: its inputs and outputs, their types,
 * documentation, secrets, defaults and enums. The Pulumi package schema of the provider plugin, the argument types
 * of the TypeScript dynamic resources and the reference page (docs/reference.md) are all made from it. No kind
 * writes one: it is derived from the kind's zod schemas and their metadata (describe.ts).
 */

declare module "zod/v4/core" {
  /**
   * What the metadata of a kind's zod schemas (`.meta({...})`, zod's global registry) says of an input or output
   * beyond its zod type, besides its `description` (required of every one: the schema, the classes and the reference
   * page show it). Put on the property's schema (`z.string().optional().meta({...})`, any wrapper of it).
   */
  interface GlobalMeta {
    /** Kept encrypted in state and masked in output, in every language. */
    secret?: boolean;
    /** The value the service or the provider uses when the property is not given (shown, not applied by the parse). */
    default?: string | number | boolean;
    /** The TypeScript type of the dynamic resource's argument, when richer than the zod type says (`OfferFilters`). */
    tsType?: string;
    /** An input the kind's check fills in when it is left out (a fleet's `labelPrefix`): not required of programs. */
    required?: false;
    /** An input whose every change makes a new object: what the kind's diff does (a test checks it), said in the docs. */
    replaces?: true;
    /** The named type of the property's enum or object (its own, or its items'): Pulumi makes a type of it in every language. */
    named?: NamedType;
  }
}

/** The metadata a property's description is derived from (describe.ts). */
export type PropertyMeta = Pick<z.core.GlobalMeta, "description" | "secret" | "default" | "tsType" | "required" | "replaces" | "named">;

/** A named enum (`values`: each value's description) or object type. */
export interface NamedType {
  name: string;
  description: string;
  values?: Readonly<Record<string, string>>;
}

/** The type of a property, in the terms of a Pulumi package schema. */
export type PropertyType =
  | { type: "string"; enum?: EnumDescription }
  | { type: "integer" | "number" | "boolean" }
  /** A JSON value of any shape (offer filters, a permission set): passed through as it is. */
  | { type: "any" }
  /** `nullable` items may be null in outputs (a member's key, null when adopted). */
  | { type: "array"; items: PropertyType & { nullable?: boolean } }
  | { type: "map"; values: PropertyType }
  | { type: "object"; object: ObjectDescription };

/** A named set of string values (Pulumi generates an enum type of it in every language). */
export interface EnumDescription {
  name: string;
  description: string;
  values: readonly { value: string; description: string }[];
}

/** A named object type with properties of its own (Pulumi generates a class of it in every language). */
export interface ObjectDescription {
  name: string;
  description: string;
  properties: Readonly<Record<string, PropertyDescription>>;
  required?: readonly string[];
}

export type PropertyDescription = PropertyType & {
  description: string;
  /** Kept encrypted in state and masked in output, in every language. */
  secret?: boolean;
  /** The value the service or the provider uses when the property is not given. */
  default?: string | number | boolean;
  /**
   * The TypeScript type the dynamic resource's argument takes, when richer than the schema's (e.g.
   * `OfferFilters`): names exported by `gpu-rental/sdk`.
   */
  tsType?: string;
  /** May be null in outputs (the service does not always say). */
  nullable?: boolean;
  /** Every change of the input replaces the resource (the schema's `willReplaceOnChanges`: documentation only). */
  replaces?: boolean;
};

export interface ResourceDescription {
  /** The type name: `gpu-rental:index:<name>`, the class name in every language. */
  name: string;
  description: string;
  inputs: Readonly<Record<string, PropertyDescription>>;
  requiredInputs?: readonly string[];
  /** The outputs beyond the inputs (which every resource also reports back). */
  outputs: Readonly<Record<string, PropertyDescription>>;
  /** Outputs always present (the rest may be null). */
  requiredOutputs?: readonly string[];
}

/**
 * The input every kind takes: adopting an object that already exists. The shells read it (managed.ts); the kinds'
 * descriptions show it.
 */
export const ADOPT_ID = z.int().optional().meta({
  description:
    "Adopt an object that already exists (made elsewhere: by hand, by a script, by another stack) instead of creating one: its id. " +
    "The object must match what the resource declares where that cannot be changed; the rest is changed to match. From then on " +
    "it is managed like any other: `pulumi destroy` deletes it. The id matters only when the resource is created.",
});

/**
 * One description of each function (a lookup the engine invokes: `gpu-rental:index:<name>`), as plain data, in the
 * same terms as a kind's: its arguments (`inputs`) and what it answers (`outputs`, all of them: a function has no
 * inputs to report back). The package schema's `functions` and the reference page are made from it.
 */
export interface FunctionDescription extends ResourceDescription {
  /**
   * A call of the function, as the reference page shows it in every language: its arguments, and what of its
   * result the example exports (`offers[0].id`: names and indices below the result).
   */
  example: { args: Record<string, unknown>; exports: string };
}
