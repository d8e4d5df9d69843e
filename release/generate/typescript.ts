import type { FunctionDescription, PropertyDescription, PropertyType, ResourceDescription } from "../../provider/lifecycle/description";
import { secretsOf } from "../../provider/lifecycle";
import type { Registry } from "../../provider/lifecycle/registry";

/**
 * The TypeScript resource classes of the dynamic providers (provider/generated/resources.ts), made from the kinds'
 * descriptions: each kind's class (a dynamic resource of the one provider module, registered by `registration`), its
 * argument type (`InstanceArgs`) and its output properties (merged into the class), with the descriptions as
 * their documentation. The classes hold nothing of their own: what a kind does is its lifecycle's.
 */
export function typescriptDeclarations(registry: Registry): string {
  const body = [
    ...[...registry.kinds.values()].map(({ description }) => declarationsOf(description)),
    ...[...registry.functions.values()].map(({ description }) => functionOf(description)),
  ].join("\n");
  const used = [...new Set([...body.matchAll(/\b(OfferFilters|OfferType|Runtype|TargetState|TemplateRuntype|PermissionSet|VolumeQuery|TemplateFilters)\b/g)].map((m) => m[1]))].sort();
  return [
    "// Generated from the kinds' and functions' descriptions (provider/lifecycle/) by `npm run gen:resources`: do not edit (a test checks it is up to date).",
    'import * as pulumi from "@pulumi/pulumi";',
    `import type { ${used.join(", ")} } from "../../sdk";`,
    ...(registry.functions.size ? ['import { FunctionInputs, invokeFunction, invokeOutput, InvokeOptions } from "../functions";'] : []),
    'import { CommonArgs, registration, ResourceOptions } from "../resource-options";',
    "",
    body,
  ].join("\n");
}

/**
 * A function's argument and result types, and the function in its two forms, as Pulumi's own SDKs have them:
 * `getOffers(args)` (a promise, of plain arguments) and `getOffersOutput(args)` (an output, of inputs).
 */
function functionOf(d: FunctionDescription): string {
  const type = d.name[0].toUpperCase() + d.name.slice(1);
  const required = new Set(d.requiredInputs ?? []);
  const always = new Set(d.requiredOutputs ?? []);
  const args = Object.entries(d.inputs).map(([name, p]) => `${doc(p, "  ")}  ${name}${required.has(name) ? "" : "?"}: ${tsType(p, true)};`);
  const result = Object.entries(d.outputs).map(
    ([name, p]) => `${doc(p, "  ")}  readonly ${name}: ${tsType(p, true)}${always.has(name) || !p.nullable ? "" : " | null"};`,
  );
  const optional = required.size ? "" : " = {}";
  // A function of no arguments takes none: an empty object type, not an empty interface (which takes anything).
  const argsType = args.length ? [`export interface ${type}Args {`, ...args, "}"] : [`export type ${type}Args = Record<string, never>;`];
  return [
    `/** The arguments of ${d.name}. */`,
    ...argsType,
    "",
    `/** What ${d.name} answers. */`,
    `export interface ${type}Result {`,
    ...result,
    "}",
    "",
    `/** ${d.description} */`,
    `export function ${d.name}(args: ${type}Args${optional}, opts?: InvokeOptions): Promise<${type}Result> {`,
    `  return invokeFunction("${d.name}", args, opts);`,
    "}",
    "",
    `/** ${d.name}, of arguments that may be other resources' outputs: its result is an output. */`,
    `export function ${d.name}Output(args: FunctionInputs<${type}Args>${optional}, opts?: InvokeOptions): pulumi.Output<${type}Result> {`,
    `  return invokeOutput("${d.name}", args, opts);`,
    "}",
    "",
  ].join("\n");
}

/** The kind's KindRegistration (provider/resource-options.ts), as a literal. */
function registrationOf(d: ResourceDescription): string {
  const secret = (props: object) => Object.entries(props).filter(([, p]) => p.secret).map(([name]) => name);
  const facts = { name: d.name, outputs: Object.keys(d.outputs), secretInputs: secret(d.inputs), secrets: secretsOf(d) };
  return JSON.stringify(facts).replace(/"(\w+)":/g, "$1: ").replace(/,/g, ", ").replace(/^\{(.*)\}$/, "{ $1 }");
}

function declarationsOf(d: ResourceDescription): string {
  const required = new Set(d.requiredInputs ?? []);
  const args = Object.entries(d.inputs)
    .filter(([name]) => name !== "adoptId")
    .map(([name, p]) => `${doc(p, "  ")}  ${name}${required.has(name) ? "" : "?"}: pulumi.Input<${tsType(p)}${p.nullable ? " | null" : ""}>;`);
  const always = new Set(d.requiredOutputs ?? []);
  const outputs = Object.entries(d.outputs).map(
    ([name, p]) => `${doc(p, "  ")}  readonly ${name}: pulumi.Output<${tsType(p, true)}${always.has(name) || !p.nullable ? "" : " | null"}>;`,
  );
  return [
    `/** The inputs of ${article(d.name)} ${d.name}. */`,
    `export interface ${d.name}Args extends CommonArgs {`,
    ...args,
    "}",
    "",
    `/** The outputs of ${article(d.name)} ${d.name}, besides its inputs. */`,
    `export interface ${d.name}OutputProperties {`,
    ...outputs,
    "}",
    "",
    `/** ${d.description} */`,
    `export class ${d.name} extends pulumi.CustomResource {`,
    `  constructor(name: string, args: ${d.name}Args, opts: ResourceOptions = {}) {`,
    `    const { type, props, options } = registration(${registrationOf(d)}, name, args, opts);`,
    "    super(type, name, props, options);",
    "  }",
    "}",
    `export interface ${d.name} extends ${d.name}OutputProperties {}`,
    "",
  ].join("\n");
}

/** The TypeScript type of a property: as an argument (`pulumi.Input` inside), or as an output (plain, nulls said). */
function tsType(p: PropertyType & { tsType?: string }, output = false): string {
  if (p.tsType) return p.tsType;
  const inner = (t: string) => (output ? t : `pulumi.Input<${t}>`);
  const orNull = (q: { nullable?: boolean }, t: string) => (output && q.nullable ? `${wrapped(t)} | null` : t);
  switch (p.type) {
    case "string":
      return p.enum ? p.enum.values.map((v) => JSON.stringify(v.value)).join(" | ") : "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "any":
      return "unknown";
    case "array":
      return `${wrapped(orNull(p.items, tsType(p.items, output)))}[]`;
    case "map":
      return `Record<string, ${inner(tsType(p.values, output))}>`;
    case "object": {
      const required = new Set(p.object.required ?? []);
      const fields = Object.entries(p.object.properties).map(([name, q]) =>
        output ? `${name}: ${orNull(q, tsType(q, true))}` : `${name}${required.has(name) ? "" : "?"}: ${inner(tsType(q))}`);
      return `{ ${fields.join("; ")} }`;
    }
  }
}

function wrapped(type: string): string {
  return /[|&]/.test(type) ? `(${type})` : type;
}

function doc(p: PropertyDescription, indent: string): string {
  const extra = p.default !== undefined ? ` Default: \`${JSON.stringify(p.default)}\`.` : "";
  return `${indent}/** ${p.description}${extra} */\n`;
}

function article(name: string): string {
  return /^[AEIOU]/.test(name) ? "an" : "a";
}
