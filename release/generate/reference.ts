import type { PropertyDescription, PropertyType, ResourceDescription } from "../../provider/lifecycle/description";
import type { Registry } from "../../provider/lifecycle/registry";
import { functionExamples } from "./examples";
import { PROVIDER_CONFIG } from "../../provider/schema/schema";

/** docs/reference.md: every resource's inputs and outputs, made from the resource descriptions. */
export function referenceMarkdown(registry: Registry): string {
  return [
    "<!-- Generated from the kinds' descriptions (provider/lifecycle/) by `npm run gen:resources`: do not edit (a test checks it is up to date). -->",
    "# Resource reference",
    "",
    "The resources and functions of the `gpu-rental` package, with the same inputs and outputs in every language: TypeScript",
    "(`gpu-rental/provider`, or the plugin's generated SDK), Python (`pulumi_gpu_rental`, names in snake_case), YAML",
    "(`type: gpu-rental:index:<Resource>`, `fn::invoke` of `gpu-rental:index:<function>`) and Go. Secrets are encrypted in",
    "state and masked in output. Any change of an input marked *replaces* makes a new object; which other changes do, the",
    "resource's description says. Functions are read-only lookups (`getOffers`, ...): they run at preview as at `up`, and refuse",
    "bad arguments before anything is asked, each named. See [plugin.md](plugin.md) for the provider plugin.",
    "",
    "## Provider configuration",
    "",
    "Stack config `gpu-rental:<name>`, or the inputs of an explicit provider (`gpu_rental.Provider(...)`).",
    "",
    table(PROVIDER_CONFIG, new Set()),
    ...[...registry.kinds.values()].flatMap(({ description: d }) =>
      section(d, { title: d.name, what: "Type", inputs: "Inputs", outputs: "Outputs\n\nEvery input, and:", outputsRequired: [] })),
    ...[...registry.functions.values()].flatMap(({ description: d }) => [
      ...section(d, { title: `${d.name} (function)`, what: "Function", inputs: "Arguments", outputs: "Result", outputsRequired: d.requiredOutputs ?? [] }),
      "### Example",
      "",
      ...functionExamples(d),
    ]),
  ].join("\n");
}

/** A kind's or a function's section: its token and description, then its inputs and its outputs. */
function section(
  d: ResourceDescription, words: { title: string; what: string; inputs: string; outputs: string; outputsRequired: readonly string[] },
): string[] {
  return [
    `## ${words.title}`,
    "",
    `${words.what} \`gpu-rental:index:${d.name}\`. ${d.description}`,
    "",
    `### ${words.inputs}`,
    "",
    table(d.inputs, new Set(d.requiredInputs ?? [])),
    `### ${words.outputs}`,
    "",
    table(d.outputs, new Set(words.outputsRequired)),
  ];
}

function table(props: Readonly<Record<string, PropertyDescription>>, required: Set<string>): string {
  const rows = Object.entries(props).map(([name, p]) => {
    const notes = [required.has(name) && "required", p.secret && "secret", p.replaces && "replaces", p.default !== undefined && `default \`${JSON.stringify(p.default)}\``].filter(Boolean);
    return `| \`${name}\` | ${typeName(p)} | ${notes.join(", ")} | ${p.description.replace(/\|/g, "\\|")}${enumText(p)} |`;
  });
  return ["| Name | Type | | Description |", "| --- | --- | --- | --- |", ...rows, ""].join("\n");
}

function typeName(t: PropertyType): string {
  switch (t.type) {
    case "string":
      return t.enum ? `enum ${t.enum.name}` : "string";
    case "array":
      return `list of ${typeName(t.items)}`;
    case "map":
      return `map of ${typeName(t.values)}`;
    case "object":
      return `object ${t.object.name} (${Object.keys(t.object.properties).map((k) => `\`${k}\``).join(", ")})`;
    default:
      return t.type;
  }
}

function enumText(p: PropertyType): string {
  if (p.type !== "string" || !p.enum) return "";
  return ` One of: ${p.enum.values.map((v) => `\`${v.value}\` (${v.description.replace(/\.$/, "")})`).join("; ")}.`;
}
