import type { PropertyDescription, PropertyType, ResourceDescription } from "../../sdk/resources/descriptions";

/**
 * The TypeScript declarations of the dynamic resources (provider/*.ts), made from the resource descriptions:
 * each kind's argument type (`InstanceArgs`) and its output properties (merged into the class), with the
 * descriptions as their documentation.
 */
export function typescriptDeclarations(descriptions: Record<string, ResourceDescription>): string {
  const body = Object.values(descriptions).map(declarationsOf).join("\n");
  const used = [...new Set([...body.matchAll(/\b(OfferFilters|OfferType|Runtype|TargetState|TemplateRuntype|PermissionSet|VolumeQuery)\b/g)].map((m) => m[1]))].sort();
  return [
    "// Generated from sdk/resources/descriptions by `npm run gen:resources`: do not edit (a test checks it is up to date).",
    'import type * as pulumi from "@pulumi/pulumi";',
    `import type { ${used.join(", ")} } from "../../sdk";`,
    'import type { CommonArgs } from "../resource-options";',
    "",
    body,
  ].join("\n");
}

function declarationsOf(d: ResourceDescription): string {
  const required = new Set(d.requiredInputs ?? []);
  const args = Object.entries(d.inputs)
    .filter(([name]) => name !== "adoptId")
    .map(([name, p]) => `${doc(p, "  ")}  ${name}${required.has(name) ? "" : "?"}: pulumi.Input<${tsType(p)}>;`);
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
