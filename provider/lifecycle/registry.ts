import { API_KEY } from "./api-key";
import { GET_ENV_VARS } from "./get-env-vars";
import { GET_INSTANCE } from "./get-instance";
import { GET_INVOICES } from "./get-invoices";
import { GET_INSTANCES } from "./get-instances";
import { GET_LOCAL_VOLUME_OFFERS } from "./get-local-volume-offers";
import { GET_NETWORK_VOLUME_OFFERS } from "./get-network-volume-offers";
import { GET_OFFERS } from "./get-offers";
import { GET_SSH_KEYS } from "./get-ssh-keys";
import { GET_TEAM_ROLES } from "./get-team-roles";
import { GET_TEMPLATES } from "./get-templates";
import { GET_USER } from "./get-user";
import { GPU_FLEET } from "./gpu-fleet";
import { INSTANCE } from "./instance";
import type { Kind, LookupFunction } from "./kind";
import { LOCAL_VOLUME } from "./local-volume";
import { NETWORK_VOLUME } from "./network-volume";
import { SSH_KEY } from "./ssh-key";
import { ENV_VAR } from "./env-var";
import { SUBACCOUNT } from "./subaccount";
import { TEAM } from "./team";
import { TEAM_MEMBER } from "./team-member";
import { TEAM_ROLE } from "./team-role";
import { WEBHOOK } from "./webhook";
import { TEMPLATE } from "./template";
import { ENDPOINT } from "./endpoint";
import { WORKER_GROUP } from "./worker-group";
import { DEPLOYMENT } from "./deployment";
import { GET_ENDPOINTS } from "./get-endpoints";
import { GET_ENDPOINT_WORKERS } from "./get-endpoint-workers";
import { GET_AUDIT_LOGS } from "./get-audit-logs";
import { GET_GPU_PRICES } from "./get-gpu-prices";

/**
 * Every resource kind and every function of the provider package: one line each, in the order the schema and the
 * reference page list them. A kind (or a function) is one file of this folder and its line here; the shells, the
 * schema, the TypeScript resource classes and the reference page follow from the registry.
 */
export const KINDS: readonly Kind[] = [INSTANCE, TEMPLATE, NETWORK_VOLUME, LOCAL_VOLUME, API_KEY, SSH_KEY, ENV_VAR, GPU_FLEET, TEAM, TEAM_ROLE, TEAM_MEMBER, SUBACCOUNT, WEBHOOK, ENDPOINT, WORKER_GROUP, DEPLOYMENT];

/** The functions (lookups the engine invokes, read-only). */
export const FUNCTIONS: readonly LookupFunction[] = [GET_OFFERS, GET_TEMPLATES, GET_INSTANCE, GET_INSTANCES, GET_NETWORK_VOLUME_OFFERS, GET_LOCAL_VOLUME_OFFERS, GET_ENV_VARS, GET_USER, GET_SSH_KEYS, GET_INVOICES, GET_TEAM_ROLES, GET_ENDPOINTS, GET_ENDPOINT_WORKERS, GET_AUDIT_LOGS, GET_GPU_PRICES];

/** The kinds and functions of a package, by their description's name. */
export interface Registry {
  kinds: ReadonlyMap<string, Kind>;
  functions: ReadonlyMap<string, LookupFunction>;
}

/** A registry of `kinds` and `functions`; two of one name are refused. */
export function registryOf(kinds: readonly Kind[], functions: readonly LookupFunction[] = []): Registry {
  return { kinds: byName(kinds, "resource kind"), functions: byName(functions, "function") };
}

function byName<T extends { description: { name: string } }>(items: readonly T[], what: string): ReadonlyMap<string, T> {
  const named = new Map<string, T>();
  for (const item of items) {
    if (named.has(item.description.name)) throw new Error(`Two of gpu-rental's ${what}s are named ${item.description.name}.`);
    named.set(item.description.name, item);
  }
  return named;
}

/** The package's own registry. */
export const REGISTRY: Registry = registryOf(KINDS, FUNCTIONS);
