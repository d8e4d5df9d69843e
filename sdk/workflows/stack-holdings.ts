import { ConfigurationError } from "../errors";
import { StackRef, stackOfUrn, stackTokenPrefix } from "./tokens";

/**
 * What a Pulumi stack's state holds of the service: the ids of its gpu-rental objects. Everything else carrying
 * the stack's creation tokens (stackTokenPrefix) is an orphan of it: made for one of its resources by a run that was
 * cut off before the state learnt of it, or left by a resource the state no longer holds.
 */
export interface StackHoldings extends StackRef {
  instances: number[];
  volumes: number[];
  apiKeys: number[];
}

/** A resource of a state, as `pulumi stack export` writes it (the fields read here). */
interface StateResource {
  urn?: string;
  type?: string;
  id?: string;
  outputs?: Record<string, unknown>;
}

/** gpu-rental's resource types, through the plugin (`gpu-rental:index:Instance`) or as dynamic resources. */
const KIND = /^(?:gpu-rental:index:|pulumi-nodejs:dynamic\/gpu-rental:)(\w+)$/;

/**
 * What a stack holds, from the JSON of `pulumi stack export --stack <stack>` (no secrets are needed; the Automation
 * API's `exportStack()` gives the same). The stack and project come from the state's URNs; a state that holds
 * none yet (a first run cut off) names neither, so `fallback` must.
 */
export function stackHoldings(exported: string | object, fallback?: StackRef): StackHoldings {
  const deployment = (typeof exported === "string" ? JSON.parse(exported) : exported)?.deployment ?? {};
  const resources: StateResource[] = deployment.resources ?? [];
  const urn = resources.find((resource) => resource.urn)?.urn;
  const ref = urn ? stackOfUrn(urn) : fallback;
  if (!ref) throw new ConfigurationError("The stack's state holds no resource, so it names no stack: give the project and stack it belongs to.");
  const holdings: StackHoldings = { ...ref, instances: [], volumes: [], apiKeys: [] };
  for (const resource of resources) {
    const kind = KIND.exec(resource.type ?? "")?.[1];
    const id = Number(resource.id);
    if (kind === "Instance" && id) holdings.instances.push(id);
    if ((kind === "NetworkVolume" || kind === "LocalVolume") && id) holdings.volumes.push(id);
    if (kind === "ApiKey" && id) holdings.apiKeys.push(id);
    const members = resource.outputs?.instanceIds;
    if (kind === "GpuFleet" && Array.isArray(members)) holdings.instances.push(...members.filter((m): m is number => typeof m === "number"));
  }
  return holdings;
}

/** Who an object carrying `token` (with `id`) belongs to, among `stacks`: held by one's state, an orphan of one, or neither. */
export function ownerOf(
  token: string | undefined | null,
  id: number,
  stacks: readonly StackHoldings[],
  held: (stack: StackHoldings) => number[],
): { ownership: "held" | "orphan" | "gpu-rental" | "other"; stack: string | null } {
  if (!token) return { ownership: "other", stack: null };
  for (const stack of stacks) {
    if (!token.startsWith(`${stackTokenPrefix(stack)}-`)) continue;
    return { ownership: held(stack).includes(id) ? "held" : "orphan", stack: `${stack.project}/${stack.stack}` };
  }
  return { ownership: "gpu-rental", stack: null };
}
