/**
 * The provider's lifecycle (`gpu-rental/provider/lifecycle`): every resource kind as one object of its own file,
 * registered once (registry.ts), served over one context made at Configure (lifecycle.ts). The dynamic providers
 * load it from the program's gpu-rental package at run time; the plugin is built with it.
 */
export { configureLifecycle, kindOfUrn, Lifecycle } from "./lifecycle";
export { ProviderContext } from "./context";
export type { ContextOptions } from "./context";
export { ProcessStop } from "./process-stop";
export { KINDS, FUNCTIONS, REGISTRY, registryOf } from "./registry";
export type { Registry } from "./registry";
export type { CheckContext, Diff, DiffLook, Imported, Kind, LookupFunction, Operation, Props } from "./kind";
export type * from "./description";
export { ADOPT_ID } from "./description";
export { describeFunction, describeProperty, describeResource } from "./describe";
export type { FunctionDeclaration, KindDeclaration } from "./describe";
export { specOf } from "./spec";
export type { CheckFailure, SpecOf } from "./spec";
export { GENERATION_INPUT, URN_INPUT } from "./managed";
export type { ResourceFunctions } from "./managed";
export { PartialCreationError, PARTIAL_OUTPUT } from "./creation";
export { direct } from "./direct";
export type { DirectOptions } from "./direct";
export { INSTANCE } from "./instance";
export type { InstanceSpec, InstanceOutputs } from "./instance";
export { TEMPLATE } from "./template";
export { NETWORK_VOLUME } from "./network-volume";
export { LOCAL_VOLUME } from "./local-volume";
export { VolumeInUseError } from "./volume";
export { API_KEY } from "./api-key";
export { SSH_KEY } from "./ssh-key";
export { ENV_VAR } from "./env-var";
export { SUBACCOUNT } from "./subaccount";
export { TEAM } from "./team";
export { TEAM_MEMBER } from "./team-member";
export { TEAM_ROLE } from "./team-role";
export { WEBHOOK } from "./webhook";
export { ENDPOINT } from "./endpoint";
export { WORKER_GROUP } from "./worker-group";
export { DEPLOYMENT } from "./deployment";
export { GET_OFFERS, offerSearchOf } from "./get-offers";
export { GET_TEMPLATES } from "./get-templates";
export { GET_INSTANCE } from "./get-instance";
export { GET_INSTANCES } from "./get-instances";
export { GET_NETWORK_VOLUME_OFFERS } from "./get-network-volume-offers";
export { GPU_FLEET } from "./gpu-fleet";
export type { FleetSpec, FleetOutputs, FleetMember } from "./gpu-fleet";

/** The engine's marker for a value not known yet (preview): the shells pass it on to `check` and `diff`. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** The names of a description's secret properties (inputs and outputs). */
export function secretsOf(description: { inputs: object; outputs: object }): string[] {
  return Object.entries({ ...description.inputs, ...description.outputs }).filter(([, p]) => (p as { secret?: boolean }).secret).map(([name]) => name);
}
