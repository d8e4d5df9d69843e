import { randomBytes } from "node:crypto";
import { z } from "zod";
import {
  destroyRetried, FAILED_STATUSES, GpuRentalClient, GpuRentalError, Instance, InstanceLeftError, InterruptedError, LIFETIME_KEYS, LifetimePolicy,
  lifetimeWarnings, NotDestroyedError, ownerEnv, rentalWarnings, rentFleet, RentOptions, resourceToken, SPEC_ENV, sweepCommand, waitForInstances, WaitOutcome,
} from "../../sdk";
import { BOOT_DEFAULTS, BootFailure, BootsFailed, Held, limitProgress, observedOutputs, rentAndBoot, targetOf, unseen } from "./boot";
import { KEPT_IN_STATE, PARTIAL_OUTPUT, PartialCreationError } from "./creation";
import { attachKeys, changeKeys } from "./instance-keys";
import { describeResource } from "./describe";
import { adoptInstance, changeBid, checkBid, creationRequestOf, criteriaOf, diffInstanceSpec, INSTANCE, instanceDigest, InstanceSpec, knownSearch, lifetimeOf, offerKept, rebids } from "./instance";
import type { CheckContext, Diff, DiffLook, Kind, Operation, Props } from "./kind";
import { CheckFailure, knownValues, pick, sameValue, SpecOf, specOf } from "./spec";

/**
 * The GpuFleet kind: `size` instances of one spec held as ONE resource, so the engine spends one operation (one
 * of its `--parallel` slots) on the whole fleet however large it is.
 *
 * Inputs: every Instance input except `offerId`, `label` and `adoptId` (the member spec), plus `size` (0-1000),
 * `labelPrefix` (member i is labelled `<labelPrefix>-<i>`; default the resource's name) and `adoptIds` (instances
 * taken as members 0.. at creation instead of being rented). Outputs: `members` (each member's state, in index
 * order), `instanceIds` and `sshEndpoints` in index order, and `instanceApiKeys` (secret; null for an adopted member).
 *
 * Create rents every member together (all or nothing: rentFleet, no two members reaching for one offer) and
 * waits for them together (one listing a poll); on any failure everything it rented is destroyed again.
 * Update removes the last members (shrink), replaces members that failed, were outbid or were destroyed out of
 * band, relabels and starts/stops the others in place, and rents the new ones (grow): no other member is
 * touched. Delete destroys every member, retrying, and names what remains if any does.
 */

const DESCRIPTION =
  "`size` instances of one spec held as one resource: one engine operation however large, so the fleet boots at the speed of " +
  "one boot. Members are rented together (all or nothing, no two reaching for one offer) and waited for together. Resizing " +
  "adds members at the end or removes the last ones; a member that failed to boot, was outbid or was destroyed out of band " +
  "is replaced on the next update without touching the others; destroy destroys every member.";

const SshEndpoint = z.object({
  instanceId: z.int().meta({ description: "The member's instance id." }),
  host: z.string().nullable().meta({ description: "The host to reach it over SSH." }),
  port: z.int().nullable().meta({ description: "The port to reach it over SSH." }),
});

/** A member: what an Instance reports of itself (its key aside, kept apart as a secret; `status` is `gone` once it no longer exists), plus its place and label. */
const FleetMember = z.object({
  index: z.int().meta({ description: "Its place in the fleet (0-based)." }),
  instanceId: z.int().meta({ description: "Its instance id." }),
  label: z.string().meta({ description: "Its label, `<labelPrefix>-<index>`." }),
  status: z.string().nullable().meta({ description: "The instance's status; `gone` once it no longer exists (seen by refresh)." }),
  sshHost: z.string().nullable().meta({ description: "The host to reach it over SSH." }),
  sshPort: z.int().nullable().meta({ description: "The port to reach it over SSH." }),
  rentedOfferId: z.int().nullable().meta({ description: "The offer rented; null for an adopted member." }),
  rentedOffer: z.record(z.string(), z.unknown()).nullable().meta({ description: "Of the offer as it was when rented, its `id` and the fields criteria compare, as an Instance keeps it." }),
  machineId: z.int().nullable().meta({ description: "The machine it runs on." }),
  gpuName: z.string().nullable().meta({ description: "The GPU model." }),
  numGpus: z.int().nullable().meta({ description: "GPUs on the instance." }),
  pricePerHour: z.number().nullable().meta({ description: "What it costs, $/hour." }),
  geolocation: z.string().nullable().meta({ description: "Where the machine is." }),
});
export type FleetMember = z.infer<typeof FleetMember>;

const FleetOutputs = z.object({
  members: z.array(FleetMember).meta({
    named: { name: "FleetMember", description: "A member of a fleet as the service last showed it." },
    description: "Each member's state, in index order.",
  }),
  instanceIds: z.array(z.int()).meta({ description: "The members' instance ids, in index order." }),
  sshEndpoints: z.array(SshEndpoint).meta({
    named: { name: "SshEndpoint", description: "Where a member is reached over SSH." },
    description: "Where to reach each member over SSH, in index order.",
  }),
  instanceApiKeys: z.array(z.string().nullable()).meta({
    secret: true,
    description: "Each member's own restricted key (`CONTAINER_API_KEY`), in index order; null for an adopted member. Kept secret.",
  }),
});
export type FleetOutputs = z.infer<typeof FleetOutputs>;

/** Every Instance input but those that name one instance (its offer, its label). */
const MEMBER_KEYS = INSTANCE.spec.keys.filter((key) => key !== "offerId" && key !== "label");

const SIZE_RULE = "size must be a whole number from 0 to 1000";

const FleetOwnSpec = z.object({
  size: z
    .number()
    .int(SIZE_RULE)
    .min(0, SIZE_RULE)
    .max(1000, SIZE_RULE)
    .meta({ description: "How many members (0 to 1000). Changing it adds members at the end or removes the last ones." }),
  // Filled in by the check (the resource's name) when the program leaves it out.
  labelPrefix: z.string().min(1).meta({ required: false, description: "Member `i` is labelled `<labelPrefix>-<i>`. Default: the resource's name." }),
  // Instances taken under management as members instead of renting them, by index (`adoptIds[i]` becomes member `i`).
  adoptIds: z
    .array(z.number().int().positive())
    .max(1000)
    .optional()
    .meta({
      description:
        "Running instances to take as members 0, 1, ... when the fleet is created, instead of renting them (how a fleet of the " +
        "earlier component form moves to this one: docs/fleets.md). Read only at creation.",
    }),
});
const OWN = specOf("GpuFleet", FleetOwnSpec);

export type FleetSpec = z.infer<typeof FleetOwnSpec> & Omit<InstanceSpec, "offerId" | "label">;

/** The fleet's own inputs and the member spec: each checked by its own schema, parsed together. */
const SPEC: SpecOf<FleetSpec> = {
  keys: [...OWN.keys, ...MEMBER_KEYS],
  shape: { ...OWN.shape, ...Object.fromEntries(MEMBER_KEYS.map((key) => [key, INSTANCE.spec.shape[key]])) },
  check: (news, unknown) => [...OWN.check(news, unknown), ...INSTANCE.spec.check(pick(news, MEMBER_KEYS), unknown)],
  parse: (input) => ({ ...INSTANCE.spec.parse(pick(input, MEMBER_KEYS)), ...OWN.parse(pick(input, OWN.keys)) }) as FleetSpec,
};

/** Inputs that name one instance: a fleet has other ways (its members' labels, adoptIds). */
const NOT_FOR_FLEETS: Record<string, string> = {
  offerId: "a fleet rents by criteria; pin offers with an Instance each",
  label: "members are labelled <labelPrefix>-<index>: set labelPrefix",
  adoptId: "a fleet adopts its members by index: set adoptIds",
};

/**
 * The provider's `check`: the fleet's own inputs and the member spec, each bad one named; the members are labelled
 * after the resource's name unless the program says otherwise.
 */
function checkFleet(given: Readonly<Record<string, unknown>>, resource: CheckContext): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const news: Record<string, unknown> = given.labelPrefix === undefined && resource.name ? { ...given, labelPrefix: resource.name } : { ...given };
  const failures = SPEC.check(news, resource.unknown).map((f) =>
    f.property === "size" && typeof news.size === "number" ? { ...f, reason: `GpuFleet${resource.name ? ` ${resource.name}` : ""}: ${SIZE_RULE}, got ${news.size}` } : f,
  );
  const refused = Object.entries(NOT_FOR_FLEETS)
    .filter(([key]) => news[key] !== undefined && news[key] !== null)
    .map(([property, reason]) => ({ property, reason: `${property} is not a GpuFleet input: ${reason}` }));
  const { adoptIds, size } = news;
  if (Array.isArray(adoptIds) && typeof size === "number" && adoptIds.length > size) {
    refused.push({ property: "adoptIds", reason: `adoptIds names ${adoptIds.length} instances for a fleet of ${size}` });
  }
  return { inputs: news, failures: [...failures, ...refused] };
}

/** The spec of member `index`: what an Instance of it would declare. */
function memberSpec(spec: FleetSpec, index: number): InstanceSpec {
  return { ...(pick(spec, MEMBER_KEYS) as InstanceSpec), label: memberLabel(spec.labelPrefix, index) };
}

function memberLabel(prefix: string, index: number): string {
  return `${prefix}-${index}`;
}

/**
 * Compares a fleet's state with a new spec. Size and label prefix change in place; a member input changes in
 * place when it would for an Instance (label, target state, the bid, policies, criteria that every member's
 * rented offer still meets), and otherwise replaces the fleet. `adoptIds` matters only at creation.
 */
export function diffFleetSpec(olds: Props, news: Props, unknown?: unknown): FleetDiff {
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

export interface FleetDiff extends Diff {
  /** Member inputs that no member can take in place: the fleet is rented anew. */
  replaces: string[];
  /** Changed in place: size (members added or removed at the end), labels, target state, the bid, recorded policies. */
  updates: string[];
}

export const GPU_FLEET: Kind<FleetSpec, FleetOutputs> = {
  // A fleet adopts its members by index (adoptIds), not by adoptId.
  description: describeResource({ name: "GpuFleet", description: DESCRIPTION, inputs: SPEC.shape, outputs: FleetOutputs, adoptId: false }),
  spec: SPEC,
  check: checkFleet,
  diff: diffFleet,
  create: createFleet,
  adopt: adoptFleet,
  read: readFleet,
  import: importFleet,
  update: updateFleet,
  delete: deleteFleet,
  warnings: fleetWarnings,
};

/** A member as created: its state and its key. */
interface Made {
  member: FleetMember;
  key: string | null;
}

/** How long the destroys of a fleet's own members (delete, shrink, replacement) go on while the service fails. */
const MEMBER_DESTROY_BUDGET_MS = 5_000;

/**
 * Creates the fleet: adopts `adoptIds`, rents the rest together, waits for all; all or nothing. Interrupted, or
 * left with members that could not be destroyed, it throws a PartialCreationError holding the members it has, so
 * the stack's state holds them and the next `up` (an update) completes the fleet.
 */
async function createFleet(spec: FleetSpec, op: Operation): Promise<{ id: string; outs: FleetSpec & FleetOutputs }> {
  const id = `fleet-${randomBytes(6).toString("hex")}`;
  const adopted = await Promise.all((spec.adoptIds ?? []).map((instanceId, index) => adoptMember(spec, index, instanceId, op)));
  const rented = await rentMembers(spec, range(adopted.length, spec.size), op).catch((error) => {
    throw partialFleet(error, id, spec, adopted);
  });
  return { id, outs: outputsOf(spec, [...adopted, ...rented]) };
}

/** Members rented (or taken over) that are left when the renting stopped: interrupted, or not destroyed again. */
class MembersLeft extends GpuRentalError {
  override name = "MembersLeft";
  constructor(
    message: string,
    readonly left: Made[],
  ) {
    super(message);
  }
}

/** A MembersLeft as the partial creation (or update) of the fleet `id` with `others`: the state holds them all. */
function partialFleet(error: unknown, id: string, spec: FleetSpec, others: Made[]): unknown {
  if (!(error instanceof MembersLeft) || error.left.length + others.length === 0) return error;
  return new PartialCreationError(`${error.message} ${KEPT_IN_STATE}`, id, outputsOf(spec, [...others, ...error.left]));
}

/**
 * What `pulumi preview` can say of the rental of a fleet whose check passed: that the market has too few offers
 * for its members (those not adopted), or that the stack's maxHourlySpend will refuse them, together. Nothing
 * while its size or its search is not known yet.
 */
async function fleetWarnings(news: Props, unknown: unknown, op: Operation): Promise<string[]> {
  const search = knownSearch(news, unknown);
  const own = knownValues(news, ["size", "adoptIds"], unknown);
  const lifetime = await lifetimeWarnings(op.client, knownValues(news, LIFETIME_KEYS, unknown) as LifetimePolicy | undefined);
  if (!search || typeof own?.size !== "number") return lifetime;
  const renting = own.size - (Array.isArray(own.adoptIds) ? own.adoptIds.length : 0);
  return [...lifetime, ...(await rentalWarnings(op.client, criteriaOf(search), op.spendCap(), renting))];
}

/** The fleet as the service shows it now (one listing): each member's status, `gone` for one destroyed. */
async function readFleet(_id: string, props: Props, op: Operation): Promise<Record<string, unknown> & FleetOutputs> {
  const listed = await listedById(op.client);
  const members = membersOf(props).map((member) => observed(member, listed.get(member.instanceId), props));
  return { ...props, ...projections(members, keysOf(props)) };
}

/**
 * The fleet's diff: its spec (see diffFleetSpec), and, when the spec alone changes nothing that replaces it,
 * its members as the service shows them (one listing): a member failed, outbid or destroyed is a change,
 * which the update replaces.
 */
function diffFleet(olds: Props, news: Props, unknown?: unknown, look?: DiffLook): FleetDiff | Promise<FleetDiff> {
  const diff = diffFleetSpec(olds, news, unknown);
  const members = membersOf(olds);
  // A bid one member's offer would refuse is said at preview, naming the input.
  if (!diff.replaces.length && rebids(olds, news as FleetSpec)) members.forEach((m) => checkBid(m.instanceId, news as FleetSpec, m.rentedOffer));
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
  const target = targetOf(olds);
  // A partial creation's fleet (cut off, or left with members it could not destroy) is completed by an update.
  const recorded = members.filter((m) => replacementReason(m.status, undefined, target) !== null).length + (olds[PARTIAL_OUTPUT] ? 1 : 0);
  if (!look || !members.length) return withBroken(diff, recorded);
  return listedById(look.client()).then((listed) => {
    const broken = members.filter((m) => replacementReason(m.status, listed.get(m.instanceId), target) !== null);
    return withBroken(diff, broken.length + (olds[PARTIAL_OUTPUT] ? 1 : 0));
  });
}

function withBroken(diff: FleetDiff, broken: number): FleetDiff {
  return broken ? { ...diff, changes: true, updates: [...diff.updates, "members"] } : diff;
}

/**
 * Brings the fleet to the new spec, touching only what must change: the last members removed (shrink), members
 * failed/outbid/gone replaced, labels and target state set on the rest, new members rented at the end (grow).
 */
async function updateFleet(id: string, olds: Props, spec: FleetSpec, op: Operation): Promise<FleetSpec & FleetOutputs> {
  const diff = diffFleetSpec(olds, spec as Record<string, unknown>);
  if (diff.replaces.length) throw new GpuRentalError(`GpuFleet ${id}: ${diff.replaces.join(", ")} cannot change in place (the engine should replace it).`);
  const keys = keysOf(olds);
  const members = membersOf(olds);
  // A new bid is checked against every member's offer before anything changes: one refused changes nothing.
  if (rebids(olds, spec)) members.filter((m) => m.index < spec.size).forEach((m) => checkBid(m.instanceId, spec, m.rentedOffer));
  const removed = members.filter((m) => m.index >= spec.size);
  if (removed.length) {
    op.log(`removing members ${removed[0].index}-${removed[removed.length - 1].index}`);
    await destroyMembers(removed.map((m) => m.instanceId), op);
  }
  const listed = await listedById(op.client);
  // Health is judged against what the members were meant to be: a member stopped as the old spec said is started
  // in place when the new one says running, not replaced.
  const target = targetOf(olds);
  const kept: Made[] = [];
  const broken: FleetMember[] = [];
  for (const member of members.filter((m) => m.index < spec.size)) {
    const instance = listed.get(member.instanceId);
    const why = replacementReason(member.status, instance, target);
    if (why === null) kept.push({ member: observed(member, instance, spec), key: keys[member.index] ?? null });
    else {
      op.log(`member ${member.index} (instance ${member.instanceId}) ${why}: replacing it`);
      broken.push(member);
    }
  }
  await destroyMembers(broken.filter((m) => listed.has(m.instanceId)).map((m) => m.instanceId), op);
  // Members a cut-off creation never rented are missing from the state: they are rented like new ones.
  const held = new Set(kept.map((m) => m.member.index));
  const missing = range(0, spec.size).filter((index) => !held.has(index));
  let settled: Made[] | undefined;
  try {
    if (rebids(olds, spec)) await Promise.all(kept.map(({ member }) => changeBid(op, member.instanceId, spec, member.rentedOffer)));
    settled = await settleInPlace(spec, kept, op);
    // A creation cut off before its keys were attached left the state saying them: all are attached again.
    const partial = !!olds[PARTIAL_OUTPUT];
    if (diff.updates.includes("sshKeys") || partial) await changeKeys(op.client, settled.map((m) => m.member.instanceId), olds.sshKeys, spec.sshKeys, partial);
    const added = await rentMembers(spec, missing, op);
    return outputsOf(spec, [...settled, ...added]);
  } catch (error) {
    // Interrupted while the kept members settled, the error holds them; while renting, the settled ones come too.
    throw partialFleet(error, id, spec, settled ?? []);
  }
}

/** Destroys every member; retries while the service fails, else names those that remain. */
async function deleteFleet(id: string, props: Props, op: Operation): Promise<void> {
  await destroyMembers(membersOf(props).map((m) => m.instanceId), op, `GpuFleet ${id}`);
}

/** A fleet is not imported whole: its members are adopted by index (adoptIds). */
async function importFleet(id: string): Promise<never> {
  throw new GpuRentalError(
    `A GpuFleet is not imported by id (${id}): declare the fleet with adoptIds: [id of member 0, ...] and run up; its members are taken as they are.`,
  );
}

/** A fleet is not adopted whole: its members are (adoptIds). */
async function adoptFleet(id: string): Promise<never> {
  throw new GpuRentalError(`GpuFleet cannot adopt ${id} with adoptId: a fleet adopts its members by index, with adoptIds: [id of member 0, ...].`);
}

/**
 * Labels and target state of the members kept: set where they differ, then waited for together with the members
 * not there yet (a cut-off creation's, still booting). Interrupted, the members as they are now are left.
 */
async function settleInPlace(spec: FleetSpec, kept: Made[], op: Operation): Promise<Made[]> {
  const target = targetOf(spec);
  const changing = kept.filter(({ member }) => member.label !== memberLabel(spec.labelPrefix, member.index) || stateOf(member) !== target);
  await Promise.all(
    changing.map(({ member }) => {
      const change: { label?: string; state?: "running" | "stopped" } = {};
      if (member.label !== memberLabel(spec.labelPrefix, member.index)) change.label = memberLabel(spec.labelPrefix, member.index);
      if (stateOf(member) !== target) change.state = target;
      return op.client.instances.update(member.instanceId, change);
    }),
  );
  const waiting = kept.filter((made) => changing.includes(made) || !reached(made.member, target));
  if (!waiting.length) return kept;
  const outcomes = await waitForInstances(op.client, waiting.map((m) => m.member.instanceId), target, { clock: op.clock, ...op.wait, signal: op.signal });
  const seen = new Map(outcomes.flatMap((o) => (o.instance ? [[o.id, o.instance] as const] : [])));
  const now = kept.map((made) => (seen.has(made.member.instanceId) ? { ...made, member: observed(made.member, seen.get(made.member.instanceId), spec) } : made));
  if (outcomes.some((o) => o.error instanceof InterruptedError)) throw new MembersLeft(`Interrupted while ${waiting.length} GpuFleet member(s) were brought to ${target}.`, now);
  failIfAny(outcomes, `could not be brought to ${target}`);
  return now;
}

/** Whether a member's recorded status is its target's (a member recorded while booting is not). */
function reached(member: FleetMember, target: "running" | "stopped"): boolean {
  return target !== "running" || member.status === "running";
}

/**
 * Rents the members at `indices` together and waits for them together (rentAndBoot): a member whose boot fails is
 * destroyed and rented again elsewhere (at most `maxBootAttempts` rentals) when the policy says so. All or nothing:
 * on any failure every member rented here is destroyed before the error is raised.
 *
 * With `identity` (a Pulumi fleet) member `i` carries the token of slot `member i`: members that an earlier,
 * cut-off run rented for this spec are taken over, others carrying those tokens destroyed. Interrupted
 * (`signal`), or left with members that cannot be destroyed, it throws MembersLeft with the members it holds.
 */
async function rentMembers(spec: FleetSpec, indices: number[], op: Operation): Promise<Made[]> {
  if (!indices.length) return [];
  const tokenOf = (index: number) => (op.identity ? resourceToken(op.identity, `member ${index}`) : undefined);
  const policy: RentOptions = {
    clock: op.clock, ...op.rent, requireInstanceKey: true, lifetime: lifetimeOf(spec), maxHourlySpend: op.spendCap(), signal: op.signal, onWait: limitProgress(op),
  };
  const made = (held: Held): Made => ({ member: memberOf(held.index, held.instance ?? unseen(held.instanceId), held.offer, spec), key: held.key });
  try {
    const booted = await rentAndBoot(
      {
        policy: spec,
        indices,
        tokenOf,
        digestOf: (index) => instanceDigest(memberSpec(spec, index)),
        who: (held) => `member ${held.index}: instance ${held.instanceId}`,
        rent: (pending, failedOffers, boot, into) => rentTogether(spec, pending, failedOffers, { ...policy, tokenOf: (i) => tokenOf(pending[i]) }, into, boot, op),
      },
      op,
      policy,
    );
    const members = booted.map(made);
    await attachKeys(op.client, members.map((m) => m.member.instanceId), spec.sshKeys).catch((error: Error) => {
      throw new MembersLeft(`${members.length} GpuFleet member(s) were rented, and attaching their SSH keys failed: ${error.message}`, members);
    });
    return members;
  } catch (error) {
    if (!(error instanceof BootFailure)) throw error;
    const held = error.held.map(made);
    const count = indices.length;
    if (error.interrupted) {
      throw new MembersLeft(`The GpuFleet's members were being rented when it was interrupted: ${held.length} of ${count} rented.${mayExist(error.error)}`, held);
    }
    const cause = error.error instanceof BootsFailed
      ? `${error.error.count} member(s) did not boot, e.g. member ${error.error.first.index}: ${error.error.first.error.message} (destroyed).`
      : error.error.message;
    if (error.cleanup) throw new MembersLeft(`Could not rent ${count} GpuFleet member(s): ${cause} Then ${error.cleanup.message}.`, held);
    const detail = error.destroyed.length ? ` The ${error.destroyed.length} member(s) it had rented were destroyed again (${error.destroyed.join(", ")}).` : "";
    throw new GpuRentalError(`Could not rent ${count} GpuFleet member(s): ${cause}${detail}`);
  }
}

/**
 * Rents the members at `pending` together (each with its member's token and spec digest), away from the offers
 * that failed to boot, into `booting`. Any rental that failed ends it (all or nothing): its error is thrown.
 */
async function rentTogether(
  spec: FleetSpec, pending: number[], failedOffers: number[], policy: RentOptions & { tokenOf(i: number): string | undefined }, booting: Held[], boot: number, op: Operation,
): Promise<void> {
  const criteria = criteriaOf(memberSpec(spec, 0));
  if (failedOffers.length) criteria.filters = { ...criteria.filters, id: { ...criteria.filters?.id, notin: failedOffers } };
  const attempts = spec.maxBootAttempts ?? BOOT_DEFAULTS.maxBootAttempts;
  op.log(`renting ${pending.length} member(s) together${boot > 1 ? ` (boot attempt ${boot} of ${attempts})` : ""}`);
  const requestOf = (index: number) => {
    const request = creationRequestOf(memberSpec(spec, index));
    return op.identity ? { ...request, env: { ...request.env, [SPEC_ENV]: instanceDigest(memberSpec(spec, index)), ...ownerEnv(op.identity, index) } } : request;
  };
  // The cap is checked for the members together (all or nothing); each member's watchdog ends it at its lifetime.
  const { members, failures } = await rentFleet(op.client, pending.length, criteria, (i) => requestOf(pending[i]), { ...policy, allOrNothing: false });
  members.forEach((m, i) => {
    if (!(m instanceof GpuRentalError)) booting.push({ index: pending[i], instanceId: m.instanceId, offer: m.offer, key: m.instanceApiKey ?? null, token: m.token });
    // Rented without its key and not destroyed: held like the others, so it is destroyed with them or kept.
    else if (m instanceof InstanceLeftError) booting.push({ index: pending[i], instanceId: m.instanceId, offer: null, key: null, token: m.token });
  });
  if (!failures.length) return;
  const interrupted = failures.filter((f): f is InterruptedError => f instanceof InterruptedError);
  if (interrupted.length) throw new InterruptedError("Interrupted while the members were rented.", interrupted.find((f) => f.token)?.token);
  throw new GpuRentalError(`Could not rent a fleet of ${pending.length}: ${failures.length} rental(s) failed (${failures[0].message}).`);
}

/** What an interruption leaves unknown: a rental request under way whose instance may exist. */
function mayExist(error: Error): string {
  const token = error instanceof InterruptedError ? error.token : undefined;
  return token ? ` A rental request was under way: an instance may exist, carrying token ${token} (\`${sweepCommand(token)}\` destroys it).` : "";
}

async function adoptMember(spec: FleetSpec, index: number, id: number, op: Operation): Promise<Made> {
  await adoptInstance(String(id), memberSpec(spec, index), op);
  const instance = await op.client.instances.get(id);
  if (!instance) throw new GpuRentalError(`GpuFleet member ${index}: instance ${id} disappeared while it was adopted.`);
  return { member: memberOf(index, instance, null, spec), key: null };
}

/**
 * Destroys a fleet's members together (destroyRetried: again while the service fails, a few seconds at most); then
 * names those still there. One already gone counts as destroyed.
 */
async function destroyMembers(ids: number[], op: Operation, what = "GpuFleet"): Promise<void> {
  try {
    await destroyRetried(op.client, ids, { clock: op.clock, serviceFailureBudgetMs: MEMBER_DESTROY_BUDGET_MS });
  } catch (error) {
    if (!(error instanceof NotDestroyedError)) throw error;
    throw new GpuRentalError(
      `${what}: ${error.left.length} instance(s) could not be destroyed and still run: ${error.left.join(", ")} (${error.failure.message}). ` +
        "Run the command again; nothing else was left.",
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
function observed(member: FleetMember, instance: Instance | null | undefined, spec: Readonly<Record<string, any>>): FleetMember {
  if (!instance) return { ...member, status: "gone" };
  return { ...memberOf(member.index, instance, member.rentedOffer, spec), rentedOfferId: member.rentedOfferId };
}

/** A member, keeping of its offer what the fleet's criteria (`spec`) compare, as an Instance does. */
function memberOf(index: number, instance: Instance, rentedOffer: Readonly<Record<string, unknown>> | null, spec: Readonly<Record<string, any>>): FleetMember {
  const outputs = observedOutputs(instance);
  const offer = offerKept(rentedOffer, spec);
  return { index, ...outputs, label: instance.label ?? "", rentedOfferId: typeof offer?.id === "number" ? offer.id : null, rentedOffer: offer };
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

function membersOf(props: Props): FleetMember[] {
  return Array.isArray(props.members) ? [...props.members].sort((a, b) => a.index - b.index) : [];
}

function keysOf(props: Props): (string | null)[] {
  return Array.isArray(props.instanceApiKeys) ? props.instanceApiKeys : [];
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}
