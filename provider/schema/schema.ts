import { CONFIG_API_KEY, CONFIG_API_URL, CONFIG_MAX_HOURLY_SPEND, ENV_API_KEY, ENV_API_URL } from "../../sdk/connection";
import type { EnumDescription, FunctionDescription, ObjectDescription, PropertyDescription, PropertyType } from "../lifecycle/description";
import { REGISTRY, Registry } from "../lifecycle/registry";
import { PLUGIN_NAME } from "../plugin/names";

/**
 * The Pulumi package schema of the `gpu-rental` provider plugin, made from the resource descriptions
 * (each kind's in provider/lifecycle/): what `pulumi package add` and `gen-sdk` generate every language's SDK from.
 */

export const PACKAGE = PLUGIN_NAME;

type Json = Record<string, unknown>;

/** Where the project publishes its releases; the engine downloads the plugin from there (docs/plugin.md, Releases). */
export const REPOSITORY = "https://github.com/gpu-rental/gpu-rental";
/**
 * The plugin archives' public location, as the engine reads it: the assets of the repository's GitHub release
 * `v<version>`. A release for another server is made with `npm run release -- --download-url URL`.
 */
export const PLUGIN_DOWNLOAD_URL = "github://api.github.com/gpu-rental/gpu-rental";

/** The provider's own settings: stack config `gpu-rental:<name>`, or the inputs of an explicit provider. */
export const PROVIDER_CONFIG: Record<string, PropertyDescription> = {
  apiUrl: {
    type: "string",
    description: `The service's URL. Default: stack config \`${CONFIG_API_URL}\`, else the environment variable ${ENV_API_URL}.`,
  },
  apiKey: {
    type: "string",
    secret: true,
    description:
      `The account's API key: a secret, never stored or shown in plaintext. Default: stack config \`${CONFIG_API_KEY}\` ` +
      `(set it with \`pulumi config set --secret ${CONFIG_API_KEY} <key>\`), else the environment variable ${ENV_API_KEY}.`,
  },
  maxHourlySpend: {
    type: "number",
    description:
      "A cap in $/hour on what the account's instances cost together: `up` refuses a rental that would cross it (nothing is " +
      `rented), \`preview\` warns of it. The default provider's is stack config \`${CONFIG_MAX_HOURLY_SPEND}\`; an explicit provider ` +
      "(another account) takes its own as an input. None when not set.",
  },
};

/** The schema the plugin serves at `version`; without one, as committed (schema.json: a release sets the version). */
export function packageSchema(version: string | undefined, registry: Registry = REGISTRY): Json {
  const types: Record<string, Json> = {};
  const properties = (props: Readonly<Record<string, PropertyDescription>>) =>
    Object.fromEntries(Object.entries(props).map(([name, p]) => [name, propertySchema(p, types)]));
  const resources = Object.fromEntries(
    [...registry.kinds.values()].map(({ description: d }) => [
      `${PACKAGE}:index:${d.name}`,
      {
        description: d.description,
        inputProperties: properties(d.inputs),
        ...nonEmpty("requiredInputs", d.requiredInputs ?? []),
        properties: properties({ ...d.inputs, ...d.outputs }),
        ...nonEmpty("required", [...(d.requiredInputs ?? []), ...(d.requiredOutputs ?? [])]),
      },
    ]),
  );
  return {
    name: PACKAGE,
    displayName: "GPU rental",
    ...(version !== undefined && { version }),
    description: "Rent GPU machines as code: instances, templates, network volumes and API keys of the GPU marketplace.",
    keywords: ["pulumi", "gpu", "category/cloud", "kind/native"],
    homepage: REPOSITORY,
    license: "Apache-2.0",
    publisher: "gpu-rental",
    repository: REPOSITORY,
    pluginDownloadURL: PLUGIN_DOWNLOAD_URL,
    config: { variables: properties(PROVIDER_CONFIG) },
    provider: {
      description: "An account of the service. The default provider reads stack config `gpu-rental:apiUrl`, `gpu-rental:apiKey` and `gpu-rental:maxHourlySpend`; an explicit one gives a program several accounts.",
      inputProperties: properties(PROVIDER_CONFIG),
    },
    resources,
    ...(registry.functions.size && { functions: Object.fromEntries([...registry.functions.values()].map(({ description }) => functionSchema(description, properties))) }),
    types,
    language: {
      python: { packageName: "pulumi_gpu_rental", requires: { pulumi: ">=3.0.0,<4.0.0" }, pyproject: { enabled: true }, respectSchemaVersion: true },
      nodejs: { packageName: "@gpu-rental/pulumi", dependencies: { "@pulumi/pulumi": "^3.0.0" }, respectSchemaVersion: true },
      go: { importBasePath: "github.com/gpu-rental/gpu-rental/sdk/go/gpurental", generateResourceContainerTypes: true, respectSchemaVersion: true },
      csharp: { rootNamespace: "GpuRental", packageReferences: { Pulumi: "3.*" }, respectSchemaVersion: true },
    },
  };
}

/** A function as the schema declares it: its arguments and its result, each an object type of its own. */
function functionSchema(d: FunctionDescription, properties: (props: Readonly<Record<string, PropertyDescription>>) => Json): [string, Json] {
  return [
    `${PACKAGE}:index:${d.name}`,
    {
      description: d.description,
      // A function of no arguments: `inputs: {}`, as the engine gives the schema back (empty properties left out).
      inputs: { ...(Object.keys(d.inputs).length && { properties: properties(d.inputs) }), ...nonEmpty("required", d.requiredInputs ?? []) },
      outputs: { properties: properties(d.outputs), ...nonEmpty("required", d.requiredOutputs ?? []) },
    },
  ];
}

function propertySchema(p: PropertyDescription, types: Record<string, Json>): Json {
  return {
    ...typeSchema(p, types),
    description: p.description,
    ...(p.secret && { secret: true }),
    ...(p.default !== undefined && { default: p.default }),
    // Said for the docs: the kind's diff replaces (replaceOnChanges would make every SDK ask the engine to).
    ...(p.replaces && { willReplaceOnChanges: true }),
  };
}

function typeSchema(t: PropertyType, types: Record<string, Json>): Json {
  switch (t.type) {
    case "string":
      return t.enum ? { $ref: refTo(t.enum, types) } : { type: "string" };
    case "any":
      return { $ref: "pulumi.json#/Any" };
    case "array":
      return { type: "array", items: typeSchema(t.items, types) };
    case "map":
      return { type: "object", additionalProperties: typeSchema(t.values, types) };
    case "object":
      return { $ref: refTo(t.object, types) };
    default:
      return { type: t.type };
  }
}

/** A list only when it has entries, as the engine writes a schema (`pulumi package get-schema`), so the two compare. */
function nonEmpty(key: string, list: readonly string[]): Json {
  return list.length ? { [key]: list } : {};
}

/** Declares a named enum or object type once, and refers to it. */
function refTo(named: EnumDescription | ObjectDescription, types: Record<string, Json>): string {
  const token = `${PACKAGE}:index:${named.name}`;
  if (!types[token]) {
    types[token] = "values" in named
      ? { type: "string", description: named.description, enum: named.values.map((v) => ({ name: enumName(v.value), value: v.value, description: v.description })) }
      : {
          type: "object",
          description: named.description,
          properties: Object.fromEntries(Object.entries(named.properties).map(([name, p]) => [name, propertySchema(p, types)])),
          ...nonEmpty("required", named.required ?? []),
        };
  }
  return `#/types/${token}`;
}

/** `on-demand` → `OnDemand`, `ssh_direct` → `SshDirect`: a name every language accepts. */
function enumName(value: string): string {
  return value.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}
