import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ssh2 } from "../../sdk/ssh2";
import { DEFAULT_MACHINE_LIMITS, MachineLimits, Machines } from "../sandbox/machines";
import { Marketplace } from "../domain/marketplace";
import { writeDurably } from "../storage/files";
import { ed25519KeyPair } from "./keys";
import { userCacheDir } from "../../sdk/cache-dir";
import { SSH_HOST, SshEndpoints } from "./server";
import { workerSdk } from "../sandbox/worker-sdk";
import { WORKER_SDK_INSIDE } from "../domain/deployments";

export { SSH_HOST, SSH_USER } from "./server";
export { ed25519KeyPair } from "./keys";

export interface SshOptions {
  /**
   * The emulator's SSH host key (an OpenSSH private key file): made on first use. Default: in the data dir
   * when there is one, else in the user's cache (~/.cache/gpu-rental/ssh/), so a known_hosts entry stays true.
   */
  hostKeyFile?: string;
  /**
   * The folder of the instances' machines (their files while down, the emulator's tools for them, the volumes).
   * Default: in the data dir, else a temporary folder removed at close.
   */
  sandboxes?: string;
  limits?: Partial<MachineLimits>;
  /** Told each time an instance's machine is up and its SSH served (every boot): where to log in. */
  onMachineUp?: (instance: { id: number; host: string; port: number }) => void;
}

/** SSH as a running emulator serves it. */
export interface RunningSsh {
  machines: Machines;
  /** The folder of the machines' files (./SshOptions's `sandboxes`). */
  sandboxes: string;
  /** The host key's public line (`ssh-ed25519 AAAA...`). */
  hostPublicKey: string;
  /** A known_hosts file that trusts the host key on every loopback port: `ssh -o UserKnownHostsFile=...`. */
  knownHostsFile: string;
  hostKeyFile: string;
  close(): void;
}

export { userCacheDir } from "../../sdk/cache-dir";

/**
 * Turns SSH on: every instance of an SSH or Jupyter runtype gets an emulated machine (emulator/sandbox/machines.ts)
 * and an SSH endpoint on loopback that takes the instance's keys.
 */
export function startSsh(market: Marketplace, options: SshOptions & { dataDir?: string; servicePort?: Promise<number | undefined> }): RunningSsh {
  const hostKeyFile = options.hostKeyFile ?? path.join(options.dataDir ?? path.join(userCacheDir(), "ssh"), "ssh_host_ed25519_key");
  const hostKey = loadOrMakeKey(hostKeyFile);
  const temporary = !options.sandboxes && !options.dataDir;
  const sandboxes = options.sandboxes ?? (options.dataDir ? path.join(options.dataDir, "machines") : fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-machines-")));
  fs.mkdirSync(sandboxes, { recursive: true });

  const endpoints: SshEndpoints = new SshEndpoints(hostKey.private, {
    running: (id) => {
      const instance = market.instances.byId(id);
      return instance && machines.isUp(instance) ? instance : undefined;
    },
    authorizedKeys: (id) => market.instances.byId(id)?.sshKeys ?? [],
    get machines(): Machines {
      return machines;
    },
  });
  const machines: Machines = new Machines(sandboxes, { ...DEFAULT_MACHINE_LIMITS, ...options.limits }, {
    now: () => market.clock.now(),
    clock: () => market.clock.reading(),
    lifecycle: () => market.lifecycle,
    assign: (instance) => endpoints.assign(instance),
    up: async (instance) => {
      instance.sshEndpoint = await endpoints.up(instance);
      options.onMachineUp?.({ id: instance.id, ...instance.sshEndpoint });
    },
    down: (instance) => endpoints.down(instance),
    release: (instance) => endpoints.forget(instance),
    reissueKey: (instance) => {
      if (instance.instanceKeyId !== undefined) market.accounts.revokeKeyById(instance.instanceKeyId);
      const key = market.accounts.issueKey(instance.ownerId, { name: `instance ${instance.id}`, instanceId: instance.id });
      instance.instanceKeyId = key.id;
      return key.key;
    },
    servicePort: () => options.servicePort ?? Promise.resolve(undefined),
    crashed: (instance, message) => market.instances.fail(instance.id, "exited", message),
    // A deployment's worker runs the image's worker program (emulator/DEPLOYMENTS.md).
    imageFolders: async (instance) => {
      if (instance.config.env?.IS_DEPLOYMENT !== "true") return [];
      const sdk = await workerSdk();
      return [{ source: sdk.folder, target: WORKER_SDK_INSIDE }, ...sdk.extra.map((folder) => ({ source: folder, target: folder }))];
    },
  }, { persistent: !!options.dataDir, covered: options.dataDir ? [options.dataDir] : [] });
  market.instances.watch(machines);
  market.volumes.removed = (volumeId) => machines.volumeRemoved(volumeId);
  const unfollowClock = market.clock.onMove(() => machines.clockMoved());

  const knownHostsFile = path.join(path.dirname(hostKeyFile), "known_hosts");
  const hostPublicKey = hostKey.public;
  writeDurably(knownHostsFile, `[${SSH_HOST}]:* ${hostPublicKey}\n`);
  return {
    machines,
    sandboxes,
    hostPublicKey,
    knownHostsFile,
    hostKeyFile,
    close: () => {
      market.instances.watch(undefined);
      market.volumes.removed = undefined;
      unfollowClock();
      machines.close();
      endpoints.close();
      if (temporary) fs.rmSync(sandboxes, { recursive: true, force: true });
    },
  };
}

/**
 * An ed25519 private key in OpenSSH format, read from `file` or made there (0600, with its `.pub` beside it).
 * Several emulators may start at once: the first to create the file wins, and every one uses that key.
 */
export function loadOrMakeKey(file: string): { private: string; public: string } {
  if (!fs.existsSync(file)) {
    const made = ed25519KeyPair("gpu-rental emulator");
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, made.private, { mode: 0o600 });
    try {
      fs.linkSync(temporary, file);
      writeDurably(`${file}.pub`, `${made.public}\n`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  const privateKey = fs.readFileSync(file, "utf8");
  const parsed = ssh2().utils.parseKey(privateKey);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error(`${file} is not an OpenSSH private key: ${parsed instanceof Error ? parsed.message : "several keys"}`);
  return { private: privateKey, public: `${parsed.type} ${parsed.getPublicSSH().toString("base64")}` };
}
