import type { GpuRentalClient } from "../client";
import { CreateInstanceRequest, Instance } from "../schemas";
import { copyFrom, copyTo, exec, ExecOptions, ExecResult, SshOptions, waitForSsh } from "./exec";
import { destroyRetried } from "./destroy";
import { OfferCriteria, rentInstance, RentOptions } from "./rent";
import { waitForStatus, WaitOptions } from "./wait";

export interface WithInstanceOptions {
  /** What to run on the rented machine (image, runtype, env, onstart, ...). Default runtype `ssh_direct`. */
  request: CreateInstanceRequest;
  rent?: RentOptions;
  wait?: WaitOptions;
  /** Log in with this key (its public half registered on the account): the session's exec and copies use it. */
  ssh?: SshOptions & { waitTimeoutMs?: number };
  /** Told when the instance is rented, running, and destroyed (progress of long work). */
  onProgress?: (step: "rented" | "running" | "ssh ready" | "destroyed", instanceId: number) => void;
}

/** The rented instance, running, as `fn` sees it. */
export interface InstanceSession {
  instance: Instance;
  /** Runs a command on it (needs `ssh`). */
  exec(command: string, options?: Partial<ExecOptions>): Promise<ExecResult>;
  /** Runs a shell script on it, sent on standard input to `bash -s` (needs `ssh`). */
  runScript(script: string, options?: Partial<ExecOptions>): Promise<ExecResult>;
  copyTo(localPath: string, remotePath: string): Promise<void>;
  copyFrom(remotePath: string, localPath: string): Promise<void>;
}

/**
 * Rents an instance, waits until it runs (and takes an SSH login, with `ssh`), runs `fn` with it, and destroys
 * it whatever happens: a job that throws still leaves nothing billing. Returns what `fn` returns.
 */
export async function withInstance<T>(client: GpuRentalClient, criteria: OfferCriteria, options: WithInstanceOptions, fn: (session: InstanceSession) => Promise<T>): Promise<T> {
  const rented = await rentInstance(client, criteria, { runtype: "ssh_direct", ...options.request }, options.rent);
  const id = rented.instanceId;
  options.onProgress?.("rented", id);
  try {
    const instance = await waitForStatus(client, id, "running", options.wait);
    options.onProgress?.("running", id);
    const ssh = options.ssh;
    if (ssh) {
      await waitForSsh(instance, { ...ssh, timeoutMs: ssh.waitTimeoutMs });
      options.onProgress?.("ssh ready", id);
    }
    const needSsh = (): SshOptions => {
      if (!ssh) throw new Error("withInstance: pass options.ssh (the private key) to run commands or copy files on the instance");
      return ssh;
    };
    return await fn({
      instance,
      exec: (command, more) => exec(instance, command, { ...needSsh(), ...more }),
      runScript: (script, more) => exec(instance, "bash -s", { ...needSsh(), ...more, stdin: script }),
      copyTo: (local, remote) => copyTo(instance, local, remote, needSsh()),
      copyFrom: (remote, local) => copyFrom(instance, remote, local, needSsh()),
    });
  } finally {
    // Gone already (fn destroyed it, or it vanished while waited on): the error that brought us here is the one to
    // see. A service failing meanwhile is tried again, within its failure budget.
    await destroyRetried(client, [id], options.rent);
    options.onProgress?.("destroyed", id);
  }
}
