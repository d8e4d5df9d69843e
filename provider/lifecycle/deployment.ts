import * as path from "node:path";
import { z } from "zod";
import { bundleFolder, CreateEndpointRequest, Deployment, DeploymentSpec as PushSpec, GpuRentalError, parseSearchParams, pushDeployment, requiredCriteria } from "../../sdk";
import { describeResource } from "./describe";
import type { CheckContext, Kind, Operation, Props } from "./kind";
import { ENDPOINT_TARGETS } from "./endpoint";
import { changedKeys, specOf } from "./spec";
import type { CheckFailure } from "./spec";

/**
 * The Deployment kind (docs/service-facts.md#deployments): a folder of Python code pushed as a versioned serverless
 * deployment, with the endpoint and worker group the service makes for it. The folder's bundle hash, computed at
 * preview, decides a new version: unchanged code changes nothing. Code, image, environment, criteria and storage
 * change as a new version (the workers roll onto it); scaling changes in place; a new name or tag replaces it.
 */

const DESCRIPTION =
  "Code served as a serverless deployment: a folder holding a Python package (imported as `deployment` on each worker, it declares " +
  "`vastai.serverless.remote.Deployment(name=<name>)` and its remote functions, one with a benchmark), the image its workers run, and the " +
  "scaling of the endpoint the service makes for it. Its bundle's content hash is computed at preview: a changed folder is one update " +
  "that makes a new version (the workers roll onto it; a version whose workers fail never serves), an unchanged one changes nothing. " +
  "Image, environment, criteria and storage make a new version too; scaling changes in place; a new name or tag replaces it. It puts " +
  "what the service's remote-function client puts for the same code and settings (its env flags and default criteria), so a program " +
  "of that client deploying the same `.py` file with the same name, tag, image, storage, `image.env(...)` and scaling finds it unchanged " +
  "and calls it by name. Destroy deletes it with its endpoint, group and workers.";

type Target = keyof typeof ENDPOINT_TARGETS;
const TARGET_NAMES = Object.keys(ENDPOINT_TARGETS) as Target[];
/** Where check records the code folder's hash among the inputs (diff compares it; the engine's `__` names are not inputs of the schema). */
export const CODE_HASH = "__codeHash";
// eslint-disable-next-line no-control-regex
const Name = z.string().min(1).max(128).regex(/^[^\u0000-\u001f\u007f/]*$/, "a name has no control characters nor /");

const Spec = z.object({
  name: Name.meta({ replaces: true, description: "The deployment's name: its code declares a deployment of this name." }),
  tag: Name.optional().meta({ replaces: true, default: "default", description: "The deployment's tag (a name has one deployment per tag)." }),
  codeFolder: z.string().min(1).meta({
    description: "The folder of its Python package (with `__init__.py`), or a single `.py` module (the file a program of the service's own client deploys); its content hash decides a new version.",
  }),
  image: z.string().min(1).max(512).meta({ description: "The image its workers run (`repo/name:tag`), holding the service's worker program." }),
  environment: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "a variable's name is letters, digits and _"), z.string()).optional().meta({
    description: "Environment variables of its workers, written into the bundle's config in name order (as the service's client writes `image.env(...)`: a change is a new version).",
  }),
  searchParams: z.string().max(4096).optional().meta({
    description: "Offer criteria of its workers, the CLI's query text (`gpu_name=RTX_4090 num_gpus=1`), sent after the service client's defaults (verified, rentable, not rented offers).",
  }),
  storage: z.number().positive().max(100_000).optional().meta({ default: 50, description: "Disk of each worker, GB." }),
  ...(Object.fromEntries(TARGET_NAMES.map((key) => [key, CreateEndpointRequest.shape[ENDPOINT_TARGETS[key][0]].meta({ description: ENDPOINT_TARGETS[key][1] })])) as Record<Target, z.ZodOptional<z.ZodNumber>>),
});
export type DeploymentSpec = z.infer<typeof Spec>;

const Outputs = z.object({
  deploymentId: z.int().meta({ description: "The deployment's id (also the resource's id)." }),
  endpointId: z.int().meta({ description: "The endpoint the service made for it." }),
  endpointName: z.string().meta({ description: "That endpoint's name, which `route` takes." }),
  workerGroupId: z.int().meta({ description: "The worker group the service made for it." }),
  currentVersionId: z.int().meta({ description: "Its newest version (the code last pushed)." }),
  lastHealthyVersionId: z.int().optional().meta({ description: "The newest version whose workers served (none until one did)." }),
  codeHash: z.string().meta({ description: "The content hash of the code's bundle." }),
});
export type DeploymentOutputs = z.infer<typeof Outputs>;

/** What makes a new version, and what changes in place. */
const NEW_VERSION = ["image", "environment", "searchParams", "storage"] as const;
const SPEC = specOf("Deployment", Spec);

export const DEPLOYMENT: Kind<DeploymentSpec, DeploymentOutputs> = {
  description: describeResource({ name: "Deployment", description: DESCRIPTION, inputs: Spec, outputs: Outputs }),
  spec: SPEC,
  check: checkDeployment,
  diff(olds, news, unknown) {
    // A tag or storage not declared is the service's default: declaring it so changes nothing.
    const value = (key: string, value: unknown) => value ?? ({ tag: "default", storage: 50 } as Record<string, unknown>)[key] ?? null;
    const replaces = changedKeys(["name", "tag"], olds, news, value, unknown);
    // The old hash: the inputs' (a plugin's olds), else the `codeHash` output (a dynamic provider's olds are outputs).
    const oldHash = olds[CODE_HASH] ?? olds.codeHash;
    const code = (unknown !== undefined && news[CODE_HASH] === unknown) || oldHash !== news[CODE_HASH] ? ["codeFolder"] : [];
    const updates = [...code, ...changedKeys([...NEW_VERSION, ...TARGET_NAMES], olds, news, value, unknown)];
    return { changes: replaces.length + updates.length > 0, replaces, updates, deleteBeforeReplace: false };
  },
  async create(spec, op) {
    const pushed = await pushDeployment(op.client, pushSpec(spec), { onProgress: (line) => op.log(line) });
    if (pushed.action !== "created") op.log(`the account had a deployment ${spec.name}:${spec.tag ?? "default"} already (deployment ${pushed.deployment.id}): taken over (${pushed.action}; destroy deletes it)`);
    return { id: String(pushed.deployment.id), outs: { ...spec, ...(await outputsOf(op, pushed.deployment, pushed.hash)) } };
  },
  async adopt(id, spec, op) {
    if (!(await op.client.deployments.get(Number(id)))) throw new GpuRentalError(`Deployment ${id} cannot be adopted: the account has no deployment ${id}.`);
    return { id, outs: await declared(Number(id), spec, op) };
  },
  async read(id: string, props: Props, op: Operation) {
    const found = await op.client.deployments.get(Number(id));
    return found ? { ...props, ...(await outputsOf(op, found, found.file_hash ?? props.codeHash)) } : null;
  },
  async import(id: string, op: Operation) {
    const found = await op.client.deployments.get(Number(id));
    if (!found) return null;
    const endpoint = found.endpoint_id ? await op.client.endpoints.get(found.endpoint_id) : null;
    const inputs: Record<string, unknown> = { name: found.name, tag: found.tag, image: found.image, storage: found.storage, [CODE_HASH]: found.file_hash };
    const criteria = requiredCriteria(found.search_params ?? "");
    if (criteria) inputs.searchParams = criteria;
    for (const key of TARGET_NAMES) {
      const value = endpoint?.[ENDPOINT_TARGETS[key][0]];
      if (value !== null && value !== undefined) inputs[key] = value;
    }
    return { inputs, outs: { ...inputs, ...(await outputsOf(op, found, found.file_hash ?? "")) } };
  },
  async update(id, _olds, spec, op) {
    return declared(Number(id), spec, op);
  },
  async delete(id, _props, op) {
    if (await op.client.deployments.delete(Number(id))) op.log(`deployment ${id} deleted with its endpoint, worker group and workers`);
  },
};

/**
 * The provider's check: the spec's rules, the criteria read as the CLI's text, and the code folder bundled to learn
 * its hash (a missing, unreadable or empty folder, or one that is not a package, is refused at preview).
 */
function checkDeployment(news: Readonly<Record<string, unknown>>, resource: CheckContext): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const failures = SPEC.check(news, resource.unknown);
  const inputs: Record<string, unknown> = { ...news };
  const known = (key: string) => typeof news[key] === "string" && !failures.some((f) => f.property === key);
  if (known("searchParams")) {
    try {
      parseSearchParams(news.searchParams as string);
    } catch (error) {
      failures.push({ property: "searchParams", reason: `searchParams: ${(error as Error).message}` });
    }
  }
  const envs = envsOf(news.environment, resource.unknown);
  if (known("codeFolder") && known("name") && envs) {
    try {
      inputs[CODE_HASH] = bundleFolder(path.resolve(news.codeFolder as string), { name: news.name as string, envs }).hash;
    } catch (error) {
      failures.push({ property: "codeFolder", reason: `codeFolder: ${(error as Error).message}` });
    }
  } else if (resource.unknown !== undefined && (news.codeFolder === resource.unknown || !envs)) {
    inputs[CODE_HASH] = resource.unknown;
  }
  return { inputs, failures };
}

/**
 * The spec as the SDK's push takes it: the environment in the bundle's config and the env flags the push's default
 * (the service client's), so that client finds the same deployment (docs/service-facts.md#deployments-by-name).
 */
function pushSpec(spec: DeploymentSpec): PushSpec {
  const scaling = Object.fromEntries(TARGET_NAMES.filter((key) => spec[key] !== undefined).map((key) => [ENDPOINT_TARGETS[key][0], spec[key]]));
  return {
    name: spec.name, tag: spec.tag, codeFolder: path.resolve(spec.codeFolder), image: spec.image, searchParams: spec.searchParams, storage: spec.storage,
    setup: { envs: envsOf(spec.environment)! }, scaling,
  };
}

/** The environment as the bundle's config lists it, by name; undefined while a value is unknown (at preview). */
function envsOf(environment: unknown, unknown?: unknown): [string, string][] | undefined {
  if (unknown !== undefined && environment === unknown) return undefined;
  const entries = Object.entries((environment ?? {}) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.some(([, value]) => typeof value !== "string" || (unknown !== undefined && value === unknown))) return undefined;
  return entries as [string, string][];
}

/** Pushes the spec onto deployment `id` (a new version where the code or what runs it changed); its outputs. */
async function declared(id: number, spec: DeploymentSpec, op: Operation): Promise<DeploymentSpec & DeploymentOutputs> {
  const pushed = await pushDeployment(op.client, pushSpec(spec), { onProgress: (line) => op.log(line) });
  if (pushed.deployment.id !== id) throw new GpuRentalError(`Deployment ${id} is gone (the push made deployment ${pushed.deployment.id}): run \`pulumi refresh\`, then up again.`);
  return { ...spec, ...(await outputsOf(op, pushed.deployment, pushed.hash)) };
}

async function outputsOf(op: Operation, found: Deployment, hash: string): Promise<DeploymentOutputs> {
  const endpoint = found.endpoint_id ? await op.client.endpoints.get(found.endpoint_id) : null;
  return {
    deploymentId: found.id, endpointId: found.endpoint_id ?? 0, endpointName: endpoint?.endpoint_name ?? "", workerGroupId: found.workergroup_id ?? 0,
    currentVersionId: found.current_version_id ?? 0,
    ...(found.last_healthy_version_id != null && { lastHealthyVersionId: found.last_healthy_version_id }), codeHash: hash,
  };
}
