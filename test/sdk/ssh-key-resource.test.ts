import { ed25519KeyPair } from "../../emulator";
import { direct, GPU_FLEET, INSTANCE, SSH_KEY } from "../../provider/lifecycle";
import { diffInstanceSpec } from "../../provider/lifecycle/instance";
import { keyMaterial, publicKeyOf, REAL_TIME } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

const SshKey = direct(SSH_KEY);
const Instance = direct(INSTANCE);
const GpuFleet = direct(GPU_FLEET);
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const laptop = ed25519KeyPair("me@laptop");
const ci = ed25519KeyPair("ci@runner");
const other = ed25519KeyPair("other");

describe("SshKey's check", () => {
  it("refuses what is not one OpenSSH public key line, naming publicKey, and a private key by name", () => {
    const reasons = (publicKey: unknown) => SshKey.check({ publicKey }).failures.map((f) => `${f.property}: ${f.reason}`);
    expect(reasons("not a key")).toEqual([expect.stringMatching(/^publicKey: .*not an OpenSSH public key/)]);
    expect(reasons(laptop.private)).toEqual([expect.stringMatching(/^publicKey: .*is a private key: give the public key/)]);
    expect(reasons(`${laptop.public}\n${ci.public}`)).toEqual([expect.stringMatching(/^publicKey: .*one OpenSSH public key line/)]);
    expect(reasons("ssh-ed25519 AAAAnotbase64!!")).toEqual([expect.stringMatching(/^publicKey: /)]);
    expect(reasons(`${laptop.public}\n`)).toEqual([]);
    expect(reasons(UNKNOWN)).toEqual([expect.stringMatching(/^publicKey/)]);
    expect(SshKey.check({ publicKey: UNKNOWN }, UNKNOWN).failures).toEqual([]);
  });

  it("replaces for other key material, and changes a new comment in place", () => {
    const olds = { publicKey: laptop.public, sshKeyId: 3 };
    expect(SshKey.diff(olds, { publicKey: ci.public })).toMatchObject({ changes: true, replaces: ["publicKey"] });
    const recommented = `${keyMaterial(laptop.public)} me@desktop`;
    expect(SshKey.diff(olds, { publicKey: recommented })).toMatchObject({ changes: true, replaces: [], updates: ["publicKey"] });
    expect(SshKey.diff(olds, { publicKey: `  ${laptop.public}\n` })).toMatchObject({ changes: false });
    expect(SshKey.diff(olds, { publicKey: UNKNOWN }, UNKNOWN)).toMatchObject({ replaces: ["publicKey"] });
  });
});

describe("SSH keys over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ lifecycle: { provisioningMs: 30_000, loadingMs: 90_000 } });
  });
  afterAll(() => emu.close());
  const options = () => ({ client: emu.client(), wait: { pollMs: 1, onPoll: () => emu.marketplace.clock.advance(20_000) } });
  const registered = async () => (await emu.client().sshKeys.list()).map((k) => [k.id, publicKeyOf(k)]);
  const loginKeys = async (instanceId: number) => (await emu.client().sshKeys.ofInstance(instanceId)).map((k) => keyMaterial(publicKeyOf(k))).sort();

  it("registers a key, changes its comment in place, sees it removed, and removes it", async () => {
    const { id, outs } = await SshKey.create({ publicKey: `${laptop.public}\n` }, options());
    expect(outs).toEqual({ publicKey: `${laptop.public}\n`, sshKeyId: Number(id) });
    expect(await registered()).toEqual([[Number(id), laptop.public]]);

    const recommented = `${keyMaterial(laptop.public)} me@desktop`;
    expect(await SshKey.update(id, outs, { publicKey: recommented }, options())).toEqual({ publicKey: recommented, sshKeyId: Number(id) });
    expect(await registered()).toEqual([[Number(id), recommented]]);
    // Changed by hand, the comment shows on refresh (the next up changes it back).
    await emu.client().sshKeys.update(Number(id), laptop.public);
    expect(await SshKey.read(id, { publicKey: recommented, sshKeyId: Number(id) }, options())).toEqual({ publicKey: laptop.public, sshKeyId: Number(id) });

    await SshKey.delete(id, options());
    expect(await registered()).toEqual([]);
    expect(await SshKey.read(id, outs, options())).toBeNull();
    await SshKey.delete(id, options()); // already gone: still fine
  });

  it("takes over the account's key of the same material (a cut-off run's, or one registered by hand), saying so at preview", async () => {
    const byHand = await emu.client().sshKeys.add(`${keyMaterial(ci.public)} by-hand`);
    const op = { ...options(), clock: REAL_TIME, log: () => undefined, spendCap: () => undefined };
    expect(await SSH_KEY.warnings!({ publicKey: ci.public }, UNKNOWN, op)).toEqual([expect.stringMatching(new RegExp(`has this key already \\(SSH key ${byHand.id}\\): up takes it over`))]);
    expect(await SSH_KEY.warnings!({ publicKey: other.public }, UNKNOWN, op)).toEqual([]);
    const { id, outs } = await SshKey.create({ publicKey: ci.public }, options());
    expect(Number(id)).toBe(byHand.id);
    expect(outs.sshKeyId).toBe(byHand.id);
    // Made as declared: its comment is the program's now.
    expect(await registered()).toEqual([[byHand.id, ci.public]]);
    await SshKey.delete(id, options());
  });

  it("imports a key by id as the account has it, adopts only the declared key, and finds no key of an id the account does not have", async () => {
    const made = await emu.client().sshKeys.add(other.public);
    expect(await SshKey.import(String(made.id), options())).toEqual({ inputs: { publicKey: other.public }, outs: { publicKey: other.public, sshKeyId: made.id } });
    expect(await SshKey.import("9999", options())).toBeNull();
    await expect(SshKey.adopt(String(made.id), { publicKey: laptop.public }, options())).rejects.toThrow(/cannot be adopted as declared: it is ssh-ed25519 \.\.\./);
    await expect(SshKey.adopt("9999", { publicKey: other.public }, options())).rejects.toThrow(/the account has no SSH key 9999/);
    expect((await SshKey.adopt(String(made.id), { publicKey: other.public }, options())).outs).toEqual({ publicKey: other.public, sshKeyId: made.id });
    await SshKey.delete(String(made.id), options());
  });

  it("attaches an Instance's sshKeys once it is created, and attaches and detaches them in place", async () => {
    const account = await emu.client().sshKeys.add(laptop.public);
    const base = { gpuModel: "RTX 4090", image: "pytorch/pytorch", label: "keys" };
    expect(Instance.check({ ...base, sshKeys: [ci.public, "nope"] }).failures.map((f) => f.property)).toEqual(["sshKeys"]);

    const { id, outs } = await Instance.create({ ...base, sshKeys: [ci.public] }, options());
    expect(await loginKeys(Number(id))).toEqual([keyMaterial(laptop.public), keyMaterial(ci.public)].sort());

    // A change of the keys is in place: keys added are attached, keys removed detached; a new comment is no change.
    const swap = { ...base, sshKeys: [`${keyMaterial(ci.public)} renamed`, other.public] };
    expect(diffInstanceSpec(outs, swap)).toMatchObject({ replaces: [], updates: ["sshKeys"] });
    expect(diffInstanceSpec(outs, { ...base, sshKeys: [`${keyMaterial(ci.public)} renamed`] })).toMatchObject({ changes: false });
    const swapped = await Instance.update(id, outs, swap, options());
    expect(await loginKeys(Number(id))).toEqual([keyMaterial(laptop.public), keyMaterial(ci.public), keyMaterial(other.public)].sort());
    await Instance.update(id, swapped, { ...base, sshKeys: [] }, options());
    expect(await loginKeys(Number(id))).toEqual([keyMaterial(laptop.public)]);
    // The account's key it took at creation stays; the keys detached stay unregistered.
    expect(await registered()).toEqual([[account.id, laptop.public]]);
    await Instance.delete(id, options());
    await emu.client().sshKeys.delete(account.id);
  });

  it("attaches a GpuFleet's sshKeys to every member, new ones too, and detaches removed ones from each", async () => {
    const base = { gpuModel: "RTX 4090", image: "pytorch/pytorch", labelPrefix: "keyed" };
    const { id, outs } = await GpuFleet.create({ ...base, size: 2, sshKeys: [ci.public] }, options());
    for (const member of outs.instanceIds) expect(await loginKeys(member)).toEqual([keyMaterial(ci.public)]);
    const grown = await GpuFleet.update(id, outs, { ...base, size: 3, sshKeys: [other.public] }, options());
    expect(grown.instanceIds.slice(0, 2)).toEqual(outs.instanceIds);
    for (const member of grown.instanceIds) expect(await loginKeys(member)).toEqual([keyMaterial(other.public)]);
    await GpuFleet.delete(id, options(), grown);
  });
});
