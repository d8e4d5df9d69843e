import { stringify } from "yaml";
import type { FunctionDescription, PropertyType } from "../../provider/lifecycle/description";

/**
 * A function's example (its description's `example`) in each language the reference shows: TypeScript (the
 * dynamic providers' `gpu-rental/provider`), Python, Go (the plugin's generated SDKs) and YAML. One call, written
 * four ways from the one example, with the names each language's SDK gives the arguments and results.
 */
export function functionExamples(d: FunctionDescription): string[] {
  const { args, exports } = d.example;
  const path = parsePath(exports);
  const last = [...path].reverse().find((p): p is string => typeof p === "string") ?? "result";
  const type = d.name[0].toUpperCase() + d.name.slice(1);
  const goArgs = Object.entries(args).map(([name, value]) => `\t${pascal(name)}: ${goArg(d.inputs[name], value, (d.requiredInputs ?? []).includes(name))},`);
  return [
    "```ts",
    `import { ${d.name}Output } from "gpu-rental/provider";`,
    "",
    `const found = ${d.name}Output(${tsValue(args)});`,
    `export const ${last} = found.apply((result) => result${pathText(path, (n) => n)});`,
    "```",
    "",
    "```python",
    "import pulumi",
    "import pulumi_gpu_rental as gpu_rental",
    "",
    `found = gpu_rental.${snake(d.name)}(${Object.entries(args).map(([name, value]) => `${snake(name)}=${pyValue(value)}`).join(", ")})`,
    `pulumi.export("${last}", found${pathText(path, snake)})`,
    "```",
    "",
    "```go",
    `found, err := gpurental.${type}(ctx, &gpurental.${type}Args{`,
    ...goArgs,
    "})",
    "if err != nil {",
    "\treturn err",
    "}",
    `ctx.Export("${last}", pulumi.ToOutput(found${pathText(path, pascal)}))`,
    "```",
    "",
    "```yaml",
    stringify({ variables: { found: { "fn::invoke": { function: `gpu-rental:index:${d.name}`, arguments: args } } }, outputs: { [last]: `\${found${pathText(path, (n) => n)}}` } }).trimEnd(),
    "```",
    "",
  ];
}

/** `offers[0].id` as its names and indices. */
function parsePath(text: string): (string | number)[] {
  return [...text.matchAll(/([A-Za-z_]\w*)|\[(\d+)\]/g)].map(([, name, index]) => (name !== undefined ? name : Number(index)));
}

function pathText(path: (string | number)[], name: (n: string) => string): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${name(p)}`)).join("");
}

function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function pascal(name: string): string {
  return name[0].toUpperCase() + name.slice(1);
}

function tsValue(value: unknown): string {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const fields = Object.entries(value).map(([k, v]) => `${/^[A-Za-z_]\w*$/.test(k) ? k : JSON.stringify(k)}: ${tsValue(v)}`);
    return `{ ${fields.join(", ")} }`;
  }
  if (Array.isArray(value)) return `[${value.map(tsValue).join(", ")}]`;
  return JSON.stringify(value);
}

function pyValue(value: unknown): string {
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (Array.isArray(value)) return `[${value.map(pyValue).join(", ")}]`;
  if (typeof value === "object") return `{${Object.entries(value as object).map(([k, v]) => `${JSON.stringify(k)}: ${pyValue(v)}`).join(", ")}}`;
  return JSON.stringify(value);
}

/** An argument as Go's generated SDK takes it: a plain value when required, else a pointer (`pulumi.StringRef`); `any` as interface{}. */
function goArg(type: PropertyType, value: unknown, required: boolean): string {
  const ref = (fn: string, text: string) => (required ? text : `pulumi.${fn}(${text})`);
  switch (type.type) {
    case "string":
      return ref("StringRef", JSON.stringify(value));
    case "integer":
      return ref("IntRef", String(value));
    case "number":
      return ref("Float64Ref", String(value));
    case "boolean":
      return ref("BoolRef", String(value));
    default:
      return goAny(value);
  }
}

function goAny(value: unknown): string {
  if (Array.isArray(value)) return `[]interface{}{${value.map(goAny).join(", ")}}`;
  if (value && typeof value === "object") return `map[string]interface{}{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${goAny(v)}`).join(", ")}}`;
  return JSON.stringify(value);
}
