import { randomBytes } from "node:crypto";
import type { GpuRentalClient } from "../client";
import { GpuRentalError } from "../errors";
import { FAILED_STATUSES, Instance } from "../schemas";
import { rentFleet } from "../workflows/fleet";
import type { InstanceOutputs } from "./instance";
import { waitForInstances, WaitOptions, WaitOutcome } from "../workflows/wait";
import { creationRequestOf, criteriaOf, DEFAULTS, knownSearch, lifetimeOf, rentsAgain } from "./instance-spec";
import { stackSpendCap } from "../connection";
import { capWarnings } from "../workflows/spend";
import { LIFETIME_KEYS, LifetimePolicy, lifetimeWarnings } from "../workflows/watchdog";
import { adoptInstance } from "./instance";
import { FleetSpec, diffFleetSpec, FleetDiff, memberLabel, memberSpec, requireFleetSpec, targetOf } from "./fleet-spec";
import type { DiffOptions, KindOptions } from "./managed";
import { clientOf, deletedOrGone, knownValues, WithClient } from "./spec";

export * from "./fleet-spec";

/**
 * GpuFleet: `size` instances of one spec held as ONE resource, so the engine spends one operation (one of its
 * `--parallel` slots) on the whole fleet however large it is.
 *
 * Inputs: every Instance input except `offerId`, `label` and `adoptId` (the member spec: image or
 * templateHashId, gpuModel, gpuCount, filters, order, offerType, maxPricePerHour, disk, env, ..., targetState,
 * onBootFailure, maxBootAttempts), plus `size` (0-1000), `labelPrefix` (member i is labelled
 * `<labelPrefix>-<i>`) and `adoptIds` (instances taken as members 0.. at creation instead of being rented).
 *
 * Outputs: the inputs, plus `members` (each member's state, in index order: FleetMember), `instanceIds` and
 * `sshEndpoints` (`{instanceId, host, port}`) in index order, and `instanceApiKeys` (secret: each member's own
 * restricted key, null for an adopted member).
 *
 * Create rents every member together (all or nothing: rentFleet, no two members reaching for one offer) and
 * waits for them together (one listing a poll); on any failure everything it rented is destroyed again.
 * Update removes the last members (shrink), replaces members that failed, were outbid or were destroyed out of
 * band, relabels and starts/stops the others in place, and rents the new ones (grow): no other member is
 * touched. Delete destroys every member, retrying, and names what remains if any does.
 */

/** A member: what an Instance reports of itself (its key aside, kept apart as a secret; `status` is `gone` once it no longer exists), plus its place and label. */
export interface FleetMember extends Omit<InstanceOutputs, "instanceApiKey" | "lifetimeInEffect"> {
  index: number;
  label: string;
}

export interface FleetOutputs {
  members: FleetMember[];
  instanceIds: number[];
  sshEndpoints: { instanceId: number; host: string | null; port: number | null }[];
  instanceApiKeys: (string | null)[];
}

export interface FleetOptions extends KindOptions {
  wait?: WaitOptions;
}

/** A member as created: its state and its key. */
interface Made {
  member: FleetMember;
  key: string | null;
}

/** Creates the fleet: adopts `adoptIds`, rents the rest together, waits for all; all or nothing. */
export async function createFleetFromSpec(input: unknown, options: FleetOptions = {}): Promise<{ id: string; outs: FleetSpec & FleetOutputs }> {
  const spec = requireFleetSpec(input);
  const client = clientOf(options);
  const adopted = await Promise.all((spec.adoptIds ?? []).map((id, index) => adoptMember(client, spec, index, id, options)));
  const indices = range(adopted.length, spec.size);
  const rented = await rentMembers(client, spec, indices, options);
  return { id: `fleet-${randomBytes(6).toString("hex")}`, outs: outputsOf(spec, [...adopted, ...rented]) };
}

/**
 * What `pulumi preview` can say of the rental of a fleet whose check passed: that the stack's maxHourlySpend will
 * refuse its members (those not adopted), together. Nothing while its size or its search is not known yet.
 */
export async function fleetWarnings(news: Record<string, unknown>, unknown?: unknown, options: WithClient = {}): Promise<string[]> {
  const search = knownSearch(news, unknown);
  const own = knownValues(news, ["size", "adoptIds"], unknown);
  const lifetime = await lifetimeWarnings(clientOf(options), knownValues(news, LIFETIME_KEYS, unknown) as LifetimePolicy | undefined);
  if (!search || typeof own?.size !== "number") return lifetime;
  const renting = own.size - (Array.isArray(own.adoptIds) ? own.adoptIds.length : 0);
  return [...lifetime, ...(await capWarnings(clientOf(options), criteriaOf(search), stackSpendCap(), renting))];
}

/** The fleet as the service shows it now (one listing): each member's status, `gone` for one destroyed. */
export async function readFleetState(id: string, props: Readonly<Record<string, any>>, options: FleetOptions = {}): Promise<Record<string, unknown>> {
  const listed = await listedById(clientOf(options));
  const members = membersOf(props).map((member) => observed(member, listed.get(member.instanceId)));
  return { ...props, ...projections(members, keysOf(props)) };
}

/**
 * The fleet's diff: its spec (see diffFleetSpec), and, when the spec alone changes nothing that replaces it,
 * its members as the service shows them (one listing): a member failed, outbid or destroyed is a change,
 * which the update replaces.
 */
export function diffFleet(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown, options?: DiffOptions): FleetDiff | Promise<FleetDiff> {
  const diff = diffFleetSpec(olds, news, unknown);
  const members = membersOf(olds);
  if (diff.replaces.length) {
    const adopted = new Set(Array.isArray(news.adoptIds) ? news.adoptIds : []);
    const held = members.filter((m) => adopted.has(m.instanceId)).map((m) => m.instanceId);
    if (held.length) {
      throw new GpuRentalError(
        `GpuFleet: ${diff.replaces.join(", ")} changed, which rents the fleet anew, but adoptIds still names its members (${held.join(", ")}): ` +
          "the new fleet would adopt them and the old one's deletion destroy them. Remove adoptIds from the program, then run up again.",
      );
    }
    return diff;
  }
  const target = targetOf(olds as FleetSpec);
  const recorded = members.filter((m) => replacementReason(m.status, undefined, target) !== null);
  if (!options || !members.length) return withBroken(diff, recorded.length);
  return listedById(options.client()).then((listed) => {
    const broken = members.filter((m) => replacementReason(m.status, listed.get(m.instanceId), target) !== null);
    return withBroken(diff, broken.length);
  });
}

function withBroken(diff: FleetDiff, broken: number): FleetDiff {
  return broken ? { ...diff, changes: true, updates: [...diff.updates, "members"] } : diff;
}

/**
 * Brings the fleet to the new spec, touching only what must change: the last members removed (shrink), members
 * failed/outbid/gone replaced, labels and target state set on the rest, new members rented at the end (grow).
 */
export async function updateFleetFromSpec(
  id: string,
  olds: Readonly<Record<string, any>>,
  input: unknown,
  options: FleetOptions = {},
): Promise<FleetSpec & FleetOutputs> {
  const spec = requireFleetSpec(input);
  const diff = diffFleetSpec(olds, spec as Record<string, unknown>);
  if (diff.replaces.length) throw new GpuRentalError(`GpuFleet ${id}: ${diff.replaces.join(", ")} cannot change in place (the engine should replace it).`);
  const client = clientOf(options);
  const log = options.log ?? (() => undefined);
  const keys = keysOf(olds);
  const members = membersOf(olds);
  const removed = members.filter((m) => m.index >= spec.size);
  if (removed.length) {
    log(`removing members ${removed[0].index}-${removed[removed.length - 1].index}`);
    await destroyAll(client, removed.map((m) => m.instanceId), log);
  }
  const listed = await listedById(client);
  // Health is judged against what the members were meant to be: a member stopped as the old spec said is started
  // in place when the new one says running, not replaced.
  const target = targetOf(olds as FleetSpec);
  const kept: Made[] = [];
  const broken: FleetMember[] = [];
  for (const member of members.filter((m) => m.index < spec.size)) {
    const instance = listed.get(member.instanceId);
    const why = replacementReason(member.status, instance, target);
    if (why === null) kept.push({ member: observed(member, instance), key: keys[member.index] ?? null });
    else {
      log(`member ${member.index} (instance ${member.instanceId}) ${why}: replacing it`);
      broken.push(member);
    }
  }
  await destroyAll(client, broken.filter((m) => listed.has(m.instanceId)).map((m) => m.instanceId), log);
  const renew = broken.map((m) => m.index);
  const settled = await settleInPlace(client, spec, kept, options);
  const added = await rentMembers(client, spec, [...renew, ...range(members.length, spec.size)], options);
  const all = [...settled, ...added].sort((a, b) => a.member.index - b.member.index);
  return outputsOf(spec, all);
}

/** Destroys every member; retries until none is left, else names those that remain. */
export async function deleteFleet(id: string, options: FleetOptions = {}, props: Readonly<Record<string, any>> = {}): Promise<void> {
  const ids = membersOf(props).map((m) => m.instanceId);
  await destroyAll(clientOf(options), ids, options.log ?? (() => undefined), `GpuFleet ${id}`);
}

/** A fleet is not imported whole: its members are adopted by index (adoptIds). */
export async function importFleet(id: string): Promise<never> {
  throw new GpuRentalError(
    `A GpuFleet is not imported by id (${id}): declare the fleet with adoptIds: [id of member 0, ...] and run up; its members are taken as they are.`,
  );
}

/** A fleet is not adopted whole: its members are (adoptIds). */
export async function adoptFleet(id: string): Promise<never> {
  throw new GpuRentalError(`GpuFleet cannot adopt ${id} with adoptId: a fleet adopts its members by index, with adoptIds: [id of member 0, ...].`);
}

/** Labels and target state of the members kept: set where they differ, then waited for together. */
async function settleInPlace(client: GpuRentalClient, spec: FleetSpec, kept: Made[], options: FleetOptions): Promise<Made[]> {
  const target = targetOf(spec);
  const changing = kept.filter(({ member }) => member.label !== memberLabel(spec.labelPrefix, member.index) || stateOf(member) !== target);
  await Promise.all(
    changing.map(({ member }) => {
      const change: { label?: string; state?: "running" | "stopped" } = {};
      if (member.label !== memberLabel(spec.labelPrefix, member.index)) change.label = memberLabel(spec.labelPrefix, member.index);
      if (stateOf(member) !== target) change.state = target;
      return client.instances.update(member.instanceId, change);
    }),
  );
  if (!changing.length) return kept;
  const outcomes = await waitForInstances(client, changing.map((m) => m.member.instanceId), target, options.wait);
  failIfAny(outcomes, `could not be brought to ${target}`);
  const seen = new Map(outcomes.map((o) => [o.id, o.instance!]));
  return kept.map((made) => (seen.has(made.member.instanceId) ? { ...made, member: observed(made.member, seen.get(made.member.instanceId)) } : made));
}

/**
 * Rents the members at `indices` together and waits for them together. A member whose boot fails is destroyed
 * and rented again elsewhere (at most `maxBootAttempts` rentals) when rentsAgain says so: with `onBootFailure:
 * replace`, and always for one that did not come up within the boot deadline. All or nothing: on any failure
 * every member rented here is destroyed before the error is raised.
 */
async function rentMembers(client: GpuRentalClient, spec: FleetSpec, indices: number[], options: FleetOptions): Promise<Made[]> {
  if (!indices.length) return [];
  const log = options.log ?? (() => undefined);
  const attempts = spec.maxBootAttempts ?? DEFAULTS.maxBootAttempts;
  const made: Made[] = [];
  const failedOffers: number[] = [];
  let pending = indices;
  try {
    for (let boot = 1; pending.length; boot++) {
      const criteria = criteriaOf(memberSpec(spec, 0));
      if (failedOffers.length) criteria.filters = { ...criteria.filters, id: { ...criteria.filters?.id, notin: failedOffers } };
      log(`renting ${pending.length} member(s) together${boot > 1 ? ` (boot attempt ${boot} of ${attempts})` : ""}`);
      // The cap is checked for the members together (all or nothing); each member's watchdog ends it at its lifetime.
      const policy = { requireInstanceKey: true, lifetime: lifetimeOf(spec), maxHourlySpend: stackSpendCap() };
      const { rented } = await rentFleet(client, pending.length, criteria, (i) => creationRequestOf(memberSpec(spec, pending[i])), policy);
      const outcomes = await waitForInstances(client, rented.map((r) => r.instanceId), targetOf(spec), options.wait);
      outcomes.forEach((o, i) => o.error || made.push({ member: memberOf(pending[i], o.instance, rented[i].offer), key: rented[i].instanceApiKey ?? null }));
      const failed = outcomes.flatMap((o, i) => (o.error ? [{ index: pending[i], error: o.error, instanceId: o.id, offerId: rented[i].offer.id }] : []));
      if (!failed.length) break;
      await destroyAll(client, failed.map((f) => f.instanceId), log);
      const first = failed.find((f) => !rentsAgain(spec, f.error, boot));
      if (first) throw new GpuRentalError(`${failed.length} member(s) did not boot, e.g. member ${first.index}: ${first.error.message} (destroyed).`);
      for (const f of failed) log(`member ${f.index}: instance ${f.instanceId} on offer ${f.offerId} did not boot (${f.error.message}): destroyed, renting another`);
      failedOffers.push(...failed.map((f) => f.offerId));
      pending = failed.map((f) => f.index);
    }
  } catch (error) {
    const ids = made.map((m) => m.member.instanceId);
    if (ids.length) await destroyAll(client, ids, log).catch(() => undefined);
    const detail = ids.length ? ` The ${ids.length} member(s) it had rented were destroyed again (${ids.join(", ")}).` : "";
    throw new GpuRentalError(`Could not rent ${indices.length} GpuFleet member(s): ${(error as Error).message}${detail}`);
  }
  return made.sort((a, b) => a.member.index - b.member.index);
}

async function adoptMember(client: GpuRentalClient, spec: FleetSpec, index: number, id: number, options: FleetOptions): Promise<Made> {
  await adoptInstance(String(id), memberSpec(spec, index), { client, wait: options.wait });
  const instance = await client.instances.get(id);
  if (!instance) throw new GpuRentalError(`GpuFleet member ${index}: instance ${id} disappeared while it was adopted.`);
  return { member: memberOf(index, instance, null), key: null };
}

/**
 * Destroys instances together, again while some remain (a failed call, a service that hiccups), at most five
 * rounds; then names those still there. One already gone counts as destroyed.
 */
async function destroyAll(client: GpuRentalClient, ids: number[], log: (line: string) => void, what = "GpuFleet"): Promise<void> {
  if (!ids.length) return;
  let left = ids;
  let lastError: Error | undefined;
  for (let round = 1; left.length && round <= 5; round++) {
    const results = await Promise.allSettled(left.map((id) => deletedOrGone(() => client.instances.destroy(id))));
    lastError = results.flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []))[0] ?? lastError;
    const listed = await listedById(client).catch(() => null);
    left = listed ? left.filter((id) => listed.has(id)) : left.filter((_, i) => results[i].status === "rejected");
    if (left.length && round < 5) {
      log(`${left.length} instance(s) not destroyed yet (${left.join(", ")}): trying again`);
      await new Promise((resolve) => setTimeout(resolve, 500 * round));
    }
  }
  if (left.length) {
    throw new GpuRentalError(
      `${what}: ${left.length} instance(s) could not be destroyed and still run: ${left.join(", ")}` +
        `${lastError ? ` (${lastError.message})` : ""}. Run the command again; nothing else was left.`,
    );
  }
}

/** Why a member must be rented again (failed, outbid, stopped against the spec, destroyed), or null. */
function replacementReason(status: string | null, instance: Instance | null | undefined, target: "running" | "stopped"): string | null {
  // undefined: not looked at the service; the state's own record decides (a refresh saw it gone).
  if (instance === undefined) return status === "gone" ? "was destroyed" : null;
  if (instance === null) return "was destroyed";
  if (target !== "running") return null;
  if (instance.intended_status === "stopped" || instance.cur_state === "stopped") return `is stopped${instance.status_msg ? ` (${instance.status_msg})` : ""}`;
  if (instance.actual_status && FAILED_STATUSES.includes(instance.actual_status)) return `failed (${instance.actual_status}${instance.status_msg ? `: ${instance.status_msg}` : ""})`;
  return null;
}

function failIfAny(outcomes: WaitOutcome[], what: string): void {
  const failed = outcomes.filter((o) => o.error);
  if (failed.length) throw new GpuRentalError(`${failed.length} GpuFleet member(s) ${what}: ${failed.map((o) => o.error!.message).join(" ")}`);
}

/** Every instance of the account, by id: one listing, whatever the fleet's size. */
async function listedById(client: GpuRentalClient): Promise<Listed> {
  const listed = new Map((await client.instances.list()).map((i) => [i.id, i]));
  return { get: (id) => listed.get(id) ?? null, has: (id) => listed.has(id) };
}

/** What one listing showed: an instance, or null when it is not there. */
interface Listed {
  get(id: number): Instance | null;
  has(id: number): boolean;
}

/** A member as the service shows it now; `gone` when the listing no longer has it. */
function observed(member: FleetMember, instance: Instance | null | undefined): FleetMember {
  if (!instance) return { ...member, status: "gone" };
  return { ...memberOf(member.index, instance, member.rentedOffer), rentedOfferId: member.rentedOfferId };
}

function memberOf(index: number, instance: Instance, rentedOffer: Record<string, unknown> | null): FleetMember {
  return {
    index,
    instanceId: instance.id,
    label: instance.label ?? "",
    status: instance.actual_status ?? null,
    sshHost: instance.ssh_host ?? null,
    sshPort: instance.ssh_port ?? null,
    rentedOfferId: typeof rentedOffer?.id === "number" ? rentedOffer.id : null,
    rentedOffer,
    machineId: instance.machine_id ?? null,
    gpuName: instance.gpu_name ?? null,
    numGpus: instance.num_gpus ?? null,
    pricePerHour: instance.dph_total ?? null,
    geolocation: instance.geolocation ?? null,
  };
}

function stateOf(member: FleetMember): "running" | "stopped" {
  return member.status === "running" || member.status === "loading" || member.status === null ? "running" : "stopped";
}

function outputsOf(spec: FleetSpec, made: Made[]): FleetSpec & FleetOutputs {
  const sorted = [...made].sort((a, b) => a.member.index - b.member.index);
  return { ...spec, ...projections(sorted.map((m) => m.member), sorted.map((m) => m.key)) };
}

/** The outputs derived from the members, in index order. */
function projections(members: FleetMember[], keys: (string | null)[]): FleetOutputs {
  return {
    members,
    instanceIds: members.map((m) => m.instanceId),
    sshEndpoints: members.map((m) => ({ instanceId: m.instanceId, host: m.sshHost, port: m.sshPort })),
    instanceApiKeys: members.map((_, i) => keys[i] ?? null),
  };
}

function membersOf(props: Readonly<Record<string, any>>): FleetMember[] {
  return Array.isArray(props.members) ? [...props.members].sort((a, b) => a.index - b.index) : [];
}

function keysOf(props: Readonly<Record<string, any>>): (string | null)[] {
  return Array.isArray(props.instanceApiKeys) ? props.instanceApiKeys : [];
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}
