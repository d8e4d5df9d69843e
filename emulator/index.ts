import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FastifyInstance } from "fastify";
import { Marketplace, MarketplaceOptions } from "./domain/marketplace";
import { buildServer, ServerOptions } from "./http/server";
import { WebhookDeliverer } from "./webhooks/deliverer";
import { Faults } from "./control/faults";
import { FileStore } from "./storage/store";
import { RunningSsh, SshOptions, startSsh } from "./ssh";
import { registerMachineControl } from "./control/machines";
import { startAutoscaling } from "./serverless/ticker";
import { machinesUnsupported } from "./sandbox/machines";
import { MachineWorker } from "./sandbox/machine-work";
import { isolationUnsupported } from "./sandbox/isolation";
import { SFTP_MISSING } from "./ssh/session";
import { sshKeys } from "./domain/ssh-keys";
import type { MachinesStatus } from "./control/machines";
import type { SshKeyRecord, UserRecord } from "./domain/records";

export { Marketplace, DEFAULT_LIFECYCLE } from "./domain/marketplace";
export type { MarketplaceOptions, MarketStats } from "./domain/marketplace";
export { Clock } from "./domain/clock";
export { buildServer } from "./http/server";
export { Faults } from "./control/faults";
export type { FaultSpec } from "./control/faults";
export { DataDirInUse } from "./storage/store";
export { holdingsOf, heldSince } from "./domain/holdings";
export { instanceLogTails } from "./log-tails";
export type { Holdings } from "./domain/holdings";
export { SSH_HOST, SSH_USER, ed25519KeyPair, loadOrMakeKey, userCacheDir } from "./ssh";
export type { SshOptions, RunningSsh } from "./ssh";
export type { OnstartReport, MachineLimits } from "./sandbox/machines";
export { MACHINE_MARK } from "./sandbox/machines";
export { NO_NETNS } from "./sandbox/network";
export { RUN_MARK, markedProcesses, killMarked, leftRunning } from "./sandbox/processes";
export type { MarkedProcess } from "./sandbox/processes";
export type { MachinesStatus } from "./control/machines";
export type { SshKeyRecord };

function isLoopback(host: string): boolean {
  return host === "localhost" || /^127\./.test(host) || host === "::1";
}

export interface EmulatorOptions extends MarketplaceOptions, ServerOptions {
  /** Keep state in this folder across restarts (see emulator/storage/store.ts); memory only without it. */
  dataDir?: string;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /**
   * Serve SSH: each instance of an SSH or Jupyter runtype gets a sandbox folder and an SSH endpoint on
   * loopback, taking the account's registered keys; `onstart` runs there at boot (see emulator/ssh/).
   */
  ssh?: boolean | SshOptions;
}

export interface RunningEmulator {
  /** Base URL, e.g. http://127.0.0.1:43121 (paths start with /api/v0/). */
  url: string;
  /** The seeded user's API key. */
  apiKey: string;
  marketplace: Marketplace;
  /** Faults to inject into the wire (also reachable through the control API). */
  faults: Faults;
  server: FastifyInstance;
  /** Set when SSH is served (`ssh` option). */
  ssh?: RunningSsh;
  /** Whether instances get emulated machines (onstart runs, SSH is served), and why not. */
  machines: MachinesStatus;
  /** Sends the webhooks' deliveries (`settled()` waits for those under way). */
  webhooks: WebhookDeliverer;
  close(): Promise<void>;
}

/** Starts the emulator over HTTP on loopback. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  // Listening on loopback is local use: webhooks may then be http:// and reach this computer (emulator/WEBHOOKS.md).
  const marketplace = new Marketplace({ localWebhooks: isLoopback(options.host ?? "127.0.0.1"), ...options });
  const store = options.dataDir ? await FileStore.open(options.dataDir) : undefined;
  if (store) {
    try {
      const saved = store.load();
      if (saved) marketplace.restore(saved);
      marketplace.durability = store;
      await marketplace.commit();
    } catch (error) {
      marketplace.durability = undefined;
      await store.release();
      throw error;
    }
  }
  const faults = new Faults();
  const webhooks = new WebhookDeliverer(marketplace.webhooks, marketplace.clock);
  const server = buildServer(marketplace, options, faults);
  const host = options.host ?? "127.0.0.1";
  let ssh: RunningSsh | undefined;
  const unsupported = options.ssh ? machinesUnsupported() : undefined;
  const machines: MachinesStatus = options.ssh && !unsupported ? { onstart: true } : { onstart: false, why: unsupported ?? "the emulator was started without its machines (--no-ssh)" };
  // Machines reach the emulator's API from their own networks (emulator/sandbox/network.ts), once it listens.
  let listening: (port: number | undefined) => void = () => undefined;
  const servicePort = new Promise<number | undefined>((resolve) => (listening = resolve));
  try {
    ssh = machines.onstart ? startSsh(marketplace, { ...(options.ssh === true ? {} : options.ssh), dataDir: options.dataDir, servicePort }) : undefined;
    if (ssh) Object.assign(machines, networkStatus(ssh.machines.sharedNetworkWhy), machineStatus());
    if (ssh) marketplace.machineWork = new MachineWorker(ssh.machines);
    // The cloud connections' buckets: with the data kept, beside it; else in a temporary folder of this run.
    marketplace.cloudRoot = options.dataDir ? path.join(options.dataDir, "cloud") : fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-cloud-"));
    if (options.controlApi !== false) registerMachineControl(server, marketplace, ssh?.machines, machines);
    await server.listen({ port: options.port ?? 0, host });
  } catch (error) {
    // A start that failed (a port in use, say) gives the data folder back: a retry in this process may take it.
    listening(undefined);
    ssh?.close();
    await server.close().catch(() => undefined);
    await store?.release();
    throw error;
  }
  // With machines, a worker is ready once its model server answers; without, once its instance runs.
  marketplace.workersServe = machines.onstart;
  const stopAutoscaling = startAutoscaling(marketplace, (id) => ssh?.machines.onstartOf(id));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  listening(port);
  store?.describe(`http://${host}:${port}`);
  marketplace.autoscalerUrl = `http://${host}:${port}`;
  return {
    url: `http://${host}:${port}`,
    apiKey: marketplace.seededKey,
    marketplace,
    faults,
    server,
    ssh,
    machines,
    webhooks,
    close: async () => {
      stopAutoscaling();
      ssh?.close();
      await webhooks.close();
      await server.close();
      await store?.release();
      if (!options.dataDir && marketplace.cloudRoot) fs.rmSync(marketplace.cloudRoot, { recursive: true, force: true });
    },
  };
}

/** What keeps the machines from booting, or from serving SFTP, as the status tells it: absent when nothing does. */
function machineStatus(): Pick<MachinesStatus, "isolation_why" | "sftp_why"> {
  const isolation = isolationUnsupported();
  return { ...(isolation && { isolation_why: isolation }), ...(SFTP_MISSING && { sftp_why: SFTP_MISSING }) };
}

/** The machines' network as the status tells it: their own, or this computer's and why. */
function networkStatus(sharedWhy: string | undefined): Pick<MachinesStatus, "own_network" | "network_why"> {
  return sharedWhy ? { own_network: false, network_why: sharedWhy } : { own_network: true };
}

/**
 * Registers a public key on an account of a running emulator (the seeded one unless told), as `POST /api/v0/ssh/`
 * does: instances created afterwards take it. The same key again is the key already there.
 */
export function registerSshKey(emulator: Pick<RunningEmulator, "marketplace">, publicKey: string, user?: UserRecord): SshKeyRecord {
  const { marketplace } = emulator;
  return sshKeys.add(user ?? marketplace.seededUser, publicKey, marketplace.clock.now());
}
