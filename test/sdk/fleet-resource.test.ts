import { GPU_FLEET, direct } from "../../provider/lifecycle";
import { diffFleetSpec } from "../../provider/lifecycle/gpu-fleet";
import { emulator, TestEmulator } from "../helpers/emulator";

const GpuFleet = direct(GPU_FLEET);

const base = { image: "pytorch/pytorch", gpuCount: 1, labelPrefix: "w" };

describe("GpuFleet spec", () => {
  it("refuses what names one instance, and a size that is not a whole number from 0 to 1000", () => {
    const failures = (news: Record<string, unknown>) => GpuFleet.check(news).failures.map((f) => f.property);
    expect(failures({ ...base, size: 3 })).toEqual([]);
    expect(failures({ ...base, size: 1.5 })).toEqual(["size"]);
    expect(failures({ ...base, size: 1001 })).toEqual(["size"]);
    expect(failures({ ...base, size: 2, offerId: 7, label: "x", adoptId: 4 })).toEqual(["offerId", "label", "adoptId"]);
    expect(failures({ ...base, size: 1, adoptIds: [1, 2] })).toEqual(["adoptIds"]);
  });

  it("changes size, label prefix and target state in place; replaces for what no member can change", () => {
    const olds = { ...base, size: 3, members: [] };
    expect(diffFleetSpec(olds, { ...base, size: 3 })).toMatchObject({ changes: false });
    expect(diffFleetSpec(olds, { ...base, size: 5, labelPrefix: "v", targetState: "stopped" })).toMatchObject({
      changes: true,
      replaces: [],
      updates: ["size", "labelPrefix", "targetState"],
    });
    expect(diffFleetSpec(olds, { ...base, size: 3, image: "other" })).toMatchObject({ replaces: ["image"] });
    expect(diffFleetSpec(olds, { ...base, size: 3, adoptIds: [1, 2, 3] })).toMatchObject({ changes: false });
  });
});

describe("GpuFleet lifecycle over HTTP, without Pulumi", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ offers: 600, contention: 0.5, lifecycle: { provisioningMs: 5_000, loadingMs: 15_000 } });
  });
  afterAll(() => emu.close());
  const instances = () => emu.marketplace.instances.all();
  // Each poll moves the emulator's frozen clock on: boots complete without sleeping.
  const options = () => {
    let polls = 0;
    const client = emu.client();
    const list = client.instances.list;
    client.instances.list = () => {
      polls++;
      return list();
    };
    return { client, polls: () => polls, wait: { pollMs: 1, onPoll: () => emu.marketplace.clock.advance(1_000) } };
  };

  it("rents 64 members together at 50% contention, no offer lost to a sibling, waiting with one listing a poll", async () => {
    const lostBefore = emu.marketplace.stats.offersLostToContention;
    const collisionsBefore = emu.marketplace.stats.offersUnavailable;
    const opts = options();
    const { id, outs } = await GpuFleet.create({ ...base, size: 64 }, opts);
    expect(emu.marketplace.stats.offersLostToContention - lostBefore).toBeGreaterThan(0); // contention did bite
    // Every refused acceptance was contention: no member reached for an offer a sibling had taken.
    expect(emu.marketplace.stats.offersUnavailable - collisionsBefore).toBe(emu.marketplace.stats.offersLostToContention - lostBefore);
    expect(outs.instanceIds).toHaveLength(64);
    expect(new Set(outs.members.map((m) => m.rentedOfferId)).size).toBe(64);
    expect(outs.members.map((m) => m.label)).toEqual(outs.members.map((_, i) => `w-${i}`));
    expect(outs.members.every((m) => m.status === "running")).toBe(true);
    expect(instances().map((i) => i.id).sort()).toEqual([...outs.instanceIds].sort());
    expect(outs.sshEndpoints[5]).toEqual({ instanceId: outs.instanceIds[5], host: expect.any(String), port: expect.any(Number) });
    expect(outs.instanceApiKeys.every((k) => typeof k === "string")).toBe(true);
    // 20 s boots, a poll a second of emulated time: some twenty listings, not 64 reads a poll.
    expect(opts.polls()).toBeLessThan(40);

    // One member fails: the live diff sees it, the update replaces it and only it.
    const failed = outs.instanceIds[7];
    emu.marketplace.instances.fail(failed, "exited", "injected");
    expect(await GpuFleet.diff(outs, { ...base, size: 64 }, undefined, { client: () => emu.client() })).toMatchObject({ changes: true, replaces: [] });
    const lines: string[] = [];
    const healed = await GpuFleet.update(id, outs, { ...base, size: 64 }, { ...options(), log: (l) => lines.push(l) });
    expect(lines.join("\n")).toMatch(/member 7 \(instance \d+\) failed \(exited: injected\): replacing it/);
    expect(healed.instanceIds.filter((x, i) => x !== outs.instanceIds[i])).toEqual([healed.instanceIds[7]]);
    expect(healed.instanceIds[7]).not.toBe(failed);
    expect(instances().some((i) => i.id === failed)).toBe(false);
    expect(await GpuFleet.diff(healed, { ...base, size: 64 }, undefined, { client: () => emu.client() })).toMatchObject({ changes: false });

    // Shrinking to 32 destroys members 32-63 and nothing else.
    const shrunk = await GpuFleet.update(id, healed, { ...base, size: 32 }, options());
    expect(shrunk.instanceIds).toEqual(healed.instanceIds.slice(0, 32));
    expect(instances().map((i) => i.id).sort()).toEqual([...healed.instanceIds.slice(0, 32)].sort());

    // A member destroyed out of band: refresh (read) records it gone, and the diff alone then asks for the update.
    await emu.client().instances.destroy(shrunk.instanceIds[3]);
    const read = (await GpuFleet.read(id, shrunk, options()))!;
    expect((read.members as any[])[3].status).toBe("gone");
    expect(GpuFleet.diff(read, { ...base, size: 32 })).toMatchObject({ changes: true, updates: ["members"] });

    // Stopped as declared, then started again: in place, the same instances.
    const healedRead = await GpuFleet.update(id, read, { ...base, size: 32 }, options());
    const stopped = await GpuFleet.update(id, healedRead, { ...base, size: 32, targetState: "stopped" }, options());
    expect(stopped.members.every((m) => m.status === "exited")).toBe(true);
    const started = await GpuFleet.update(id, stopped, { ...base, size: 32 }, options());
    expect(started.instanceIds).toEqual(healedRead.instanceIds);
    expect(started.members.every((m) => m.status === "running")).toBe(true);

    await GpuFleet.delete(id, options(), started);
    expect(instances()).toEqual([]);
  });

  it("all or nothing: a member that fails its boot leaves nothing rented", async () => {
    const client = emu.client();
    const original = client.instances.create;
    let created = 0;
    client.instances.create = async (offerId, request) => {
      const answer = await original(offerId, request);
      if (created++ === 2) emu.marketplace.instances.fail(answer.new_contract, "exited", "image pull failed");
      return answer;
    };
    const error = await GpuFleet.create({ ...base, size: 5 }, { client, wait: { pollMs: 1, onPoll: () => emu.marketplace.clock.advance(1_000) } }).catch((e) => e);
    expect(error.message).toMatch(/Could not rent 5 GpuFleet member\(s\): 1 member\(s\) did not boot.*image pull failed.*destroyed again/);
    expect(instances()).toEqual([]);
  });

  it("bids again for every member in place, after checking the new bid against each member's offer", async () => {
    const spec = { ...base, gpuModel: undefined, offerType: "bid", size: 3 };
    const { id, outs } = await GpuFleet.create(spec, options());
    const members = () => instances().filter((i) => outs.instanceIds.includes(i.id));
    const highest = Math.max(...members().map((i) => i.offer.min_bid!));
    const lowest = Math.min(...members().map((i) => i.offer.min_bid!));
    const updated = await GpuFleet.update(id, outs, { ...spec, price: highest * 2 }, options());
    expect(updated.instanceIds).toEqual(outs.instanceIds);
    expect(members().map((i) => i.pricePerHour)).toEqual([highest * 2, highest * 2, highest * 2]);
    // A bid between the lowest and the highest minimum: one member's offer refuses it, so no member is changed.
    expect(lowest).toBeLessThan(highest);
    expect(() => GpuFleet.diff(updated, { ...spec, price: (lowest + highest) / 2 })).toThrow(/below the minimum bid of its offer/);
    await expect(GpuFleet.update(id, updated, { ...spec, price: (lowest + highest) / 2 }, options())).rejects.toThrow(/below the minimum bid of its offer/);
    expect(members().map((i) => i.pricePerHour)).toEqual([highest * 2, highest * 2, highest * 2]);
    await GpuFleet.delete(id, options(), updated);
    expect(members()).toEqual([]);
  });

  it("destroy destroys every member; one the service will not destroy is retried, then named, and the next destroy finishes", async () => {
    const { id, outs } = await GpuFleet.create({ ...base, size: 4 }, options());
    const stuck = outs.instanceIds[2];
    emu.faults.add({ path: `/api/v0/instances/${stuck}/`, method: "DELETE", kind: "status", status: 503, times: 1000 });
    const client = emu.client({ retries: 0 });
    const error = await GpuFleet.delete(id, { client }, outs).catch((e) => e);
    emu.faults.clear();
    expect(error.message).toMatch(new RegExp(`1 instance\\(s\\) could not be destroyed and still run: ${stuck} .*Run the command again`));
    expect(instances().map((i) => i.id)).toEqual([stuck]);
    await GpuFleet.delete(id, { client }, outs);
    expect(instances()).toEqual([]);
  });

  it("adopts running instances as its first members by index, renting the rest", async () => {
    const opts = options();
    const first = await GpuFleet.create({ ...base, size: 2 }, opts);
    const { outs } = await GpuFleet.create({ ...base, size: 3, adoptIds: first.outs.instanceIds }, options());
    expect(outs.instanceIds.slice(0, 2)).toEqual(first.outs.instanceIds);
    expect(instances()).toHaveLength(3);
    expect(outs.members.map((m) => m.label)).toEqual(["w-0", "w-1", "w-2"]);
    expect(() => GpuFleet.diff(outs, { ...base, size: 3, image: "other", adoptIds: first.outs.instanceIds })).toThrow(/Remove adoptIds/);
    await GpuFleet.delete("f", options(), outs);
    expect(instances()).toEqual([]);
  });
});
