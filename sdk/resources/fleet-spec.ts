import { z } from "zod";
import { diffInstanceSpec, InstanceSpec, SPEC_KEYS } from "./instance-spec";
import { CheckFailure, checkInputs, requireSpec, sameValue } from "./spec";

/**
 * The declared state of a GpuFleet: `size` members of one instance spec, member `i` labelled
 * `<labelPrefix>-<i>`, and how two of them compare.
 */

/** Every Instance input but those that name one instance (its offer, its label, the object it adopts). */
export const MEMBER_KEYS = SPEC_KEYS.filter((key) => key !== "offerId" && key !== "label");

export const FleetOwnSpec = z.object({
  /** Members, 0 to 1000. */
  size: z.number().int("size must be a whole number").min(0).max(1000),
  /** Member `i` is labelled `<labelPrefix>-<i>` (the Pulumi shells default it to the resource's name). */
  labelPrefix: z.string().min(1),
  /**
   * Instances to take under management as members instead of renting them, by index (`adoptIds[i]` becomes
   * member `i`): how a fleet of the component form (one `Instance` per member) moves to this one. Read only
   * when the fleet is created.
   */
  adoptIds: z.array(z.number().int().positive()).max(1000).optional(),
});
const OWN_KEYS = ["size", "labelPrefix", "adoptIds"] as const;

export type FleetSpec = z.infer<typeof FleetOwnSpec> & Omit<InstanceSpec, "offerId" | "label">;

/** Inputs that name one instance: a fleet has other ways (its members' labels, adoptIds). */
const NOT_FOR_FLEETS: Record<string, string> = {
  offerId: "a fleet rents by criteria; pin offers with an Instance each",
  label: "members are labelled <labelPrefix>-<index>: set labelPrefix",
  adoptId: "a fleet adopts its members by index: set adoptIds",
};

/** The provider's `check`: the fleet's own inputs and the member spec, each bad one named. */
export function checkFleetInputs(news: Record<string, unknown>, unknown?: unknown): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const own = checkInputs(FleetOwnSpec, OWN_KEYS, news, unknown);
  const member = checkInputs(InstanceSpec, MEMBER_KEYS, news, unknown);
  const refused = Object.entries(NOT_FOR_FLEETS)
    .filter(([key]) => news[key] !== undefined && news[key] !== null)
    .map(([property, reason]) => ({ property, reason: `${property} is not a GpuFleet input: ${reason}` }));
  const adoptIds = news.adoptIds;
  const size = news.size;
  if (Array.isArray(adoptIds) && typeof size === "number" && adoptIds.length > size) {
    refused.push({ property: "adoptIds", reason: `adoptIds names ${adoptIds.length} instances for a fleet of ${size}` });
  }
  return { inputs: news, failures: [...own.failures, ...member.failures, ...refused] };
}

/** The spec, or a GpuRentalError naming every bad input. */
export function requireFleetSpec(input: unknown): FleetSpec {
  const props = (input ?? {}) as Record<string, unknown>;
  const own = requireSpec("GpuFleet", FleetOwnSpec, pick(props, OWN_KEYS));
  const member = requireSpec("GpuFleet", InstanceSpec, pick(props, MEMBER_KEYS));
  return { ...member, ...own };
}

/** The spec of member `index`: what an Instance of it would declare. */
export function memberSpec(spec: FleetSpec, index: number): InstanceSpec {
  const member: Record<string, unknown> = pick(spec as Record<string, unknown>, MEMBER_KEYS);
  return { ...(member as InstanceSpec), label: memberLabel(spec.labelPrefix, index) };
}

export function memberLabel(prefix: string, index: number): string {
  return `${prefix}-${index}`;
}

export interface FleetDiff {
  changes: boolean;
  /** Member inputs that no member can take in place: the fleet is rented anew. */
  replaces: string[];
  /** Changed in place: size (members added or removed at the end), labels, target state, recorded policies. */
  updates: string[];
  deleteBeforeReplace: boolean;
}

/**
 * Compares a fleet's state with a new spec. Size and label prefix change in place; a member input changes in
 * place when it would for an Instance (label, target state, policies, criteria that every member's rented offer
 * still meets), and otherwise replaces the fleet. `adoptIds` matters only at creation.
 */
export function diffFleetSpec(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown): FleetDiff {
  const own = (["size", "labelPrefix"] as const).filter((key) => (unknown !== undefined && news[key] === unknown) || !sameValue(olds[key], news[key]));
  const members: any[] = Array.isArray(olds.members) && olds.members.length ? olds.members : [{}];
  const replaces = new Set<string>();
  const updates = new Set<string>(own);
  for (const member of members) {
    // Each member's rented offer decides whether new criteria still hold for it; labels are the fleet's.
    const memberOlds = { ...olds, label: "", rentedOffer: member.rentedOffer ?? null, rentedOfferId: member.rentedOfferId ?? null };
    const diff = diffInstanceSpec(memberOlds, { ...news, label: "" }, unknown);
    diff.replaces.forEach((key) => replaces.add(key));
    diff.updates.forEach((key) => updates.add(key));
  }
  const changes = replaces.size > 0 || updates.size > 0;
  return { changes, replaces: [...replaces], updates: [...updates].filter((key) => !replaces.has(key)), deleteBeforeReplace: false };
}

function pick(props: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => props[k] !== undefined && props[k] !== null).map((k) => [k, props[k]]));
}
