import { API_KEY } from "./api-key";
import type { ResourceDescription } from "./description";
import { GPU_FLEET } from "./gpu-fleet";
import { INSTANCE } from "./instance";
import { NETWORK_VOLUME } from "./network-volume";
import { TEMPLATE } from "./template";

export type * from "./description";

/** Every resource kind's description, by its type name (the keys of RESOURCE_FUNCTIONS). */
export const RESOURCE_DESCRIPTIONS = {
  Instance: INSTANCE,
  Template: TEMPLATE,
  NetworkVolume: NETWORK_VOLUME,
  ApiKey: API_KEY,
  GpuFleet: GPU_FLEET,
} satisfies Record<string, ResourceDescription>;

/** The names of a kind's secret properties (inputs and outputs). */
export function secretsOf(description: ResourceDescription): string[] {
  return Object.entries({ ...description.inputs, ...description.outputs }).filter(([, p]) => p.secret).map(([name]) => name);
}
