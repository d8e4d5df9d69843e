import { Clock, REAL_TIME } from "../clock";
import type { Client, ClientChannel, ConnectConfig } from "ssh2";
import { ssh2 } from "../ssh2";
import { GpuRentalError } from "../errors";
import { TailBuffer } from "../tail-buffer";

/**
 * Where an instance is reached over SSH: an instance as the API shows it (`ssh_host`, `ssh_port`), or a host
 * and port given directly.
 */
export type SshTarget = { ssh_host?: string | null; ssh_port?: number | null; id?: number } | { host: string; port: number };

export interface SshOptions {
  /** The private key whose public half is registered on the account (OpenSSH or PEM text, or a Buffer). */
  privateKey: string | Buffer;
  passphrase?: string;
  /** Default `root`, as instances take logins. */
  user?: string;
  /**
   * The host key expected (an OpenSSH public key line, `ssh-ed25519 AAAA...`): a server with another is refused.
   * Without it the host key is not checked (as `StrictHostKeyChecking=no`): instances are new hosts each time.
   */
  hostKey?: string;
  /** Connecting and logging in must be done by then. Default 20 s. */
  connectTimeoutMs?: number;
}

export interface ExecOptions extends SshOptions {
  /** The command is killed (and `timedOut` set) after this long. Default 10 minutes. */
  timeoutMs?: number;
  /** Sent to the command's standard input, which is then closed. */
  stdin?: string | Buffer;
  /** Output kept per stream: the last bytes (what came before is dropped and counted). Default 16 MiB. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** The command's exit code; null when it was ended by a signal (or by the timeout). */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Bytes of output dropped from the start to stay within `maxOutputBytes` (both streams). */
  droppedBytes: number;
}

/** SSH failed: no connection, the key refused, the host key not the one expected, or the session broke. */
export class SshError extends GpuRentalError {
  override name = "SshError";
}

/**
 * Runs `command` on the instance over SSH (through the instance's shell, as `ssh host command` does) and
 * collects its exit code and output. A command that runs longer than `timeoutMs` is killed; a non-zero exit
 * code is a result, not an error.
 */
export async function exec(target: SshTarget, command: string, options: ExecOptions): Promise<ExecResult> {
  return withConnection(target, options, (connection) => runCommand(connection, command, options));
}

/** Copies a local file onto the instance (SFTP); a relative `remotePath` is from the login's home folder. */
export async function copyTo(target: SshTarget, localPath: string, remotePath: string, options: SshOptions): Promise<void> {
  await withConnection(target, options, (connection) => sftpCall(connection, (sftp, done) => sftp.fastPut(localPath, remotePath, done)));
}

/** Copies a file of the instance to `localPath` (SFTP). */
export async function copyFrom(target: SshTarget, remotePath: string, localPath: string, options: SshOptions): Promise<void> {
  await withConnection(target, options, (connection) => sftpCall(connection, (sftp, done) => sftp.fastGet(remotePath, localPath, done)));
}

export interface WaitForSshOptions extends SshOptions {
  /** Give up after this long. Default 5 minutes. */
  timeoutMs?: number;
  /** Between tries. Default 1 s. */
  intervalMs?: number;
  /** The clock of the deadline and the pauses. Default real time. */
  clock?: Clock;
}

/**
 * Waits until the instance takes an SSH login with the key (its SSH daemon can come up after the instance
 * reports `running`): tries to log in and run `true` until that works. Fails with the last error at the timeout.
 */
export async function waitForSsh(target: SshTarget, options: WaitForSshOptions): Promise<void> {
  const clock = options.clock ?? REAL_TIME;
  const deadline = clock.now() + (options.timeoutMs ?? 300_000);
  // Before the first try: an instance without an SSH endpoint will not grow one while this waits.
  const where = describe(target, options);
  for (;;) {
    const remaining = deadline - clock.now();
    try {
      const result = await exec(target, "true", { ...options, timeoutMs: Math.max(1_000, remaining), connectTimeoutMs: Math.min(options.connectTimeoutMs ?? 20_000, Math.max(1_000, remaining)) });
      if (result.exitCode === 0) return;
      throw new SshError(`logged in, but \`true\` exited with ${result.exitCode ?? result.signal}: ${result.stderr.trim()}`);
    } catch (error) {
      if (clock.now() + (options.intervalMs ?? 1_000) >= deadline) {
        throw new SshError(`${where} did not take an SSH login within ${(options.timeoutMs ?? 300_000) / 1000} s: ${(error as Error).message}`);
      }
    }
    await clock.sleep(options.intervalMs ?? 1_000);
  }
}

function endpointOf(target: SshTarget): { host: string; port: number } {
  if ("host" in target) return target;
  if (!target.ssh_host || !target.ssh_port) {
    throw new SshError(`instance ${target.id ?? "?"} shows no SSH endpoint (ssh_host ${target.ssh_host}, ssh_port ${target.ssh_port}): it has runtype args, or it is not running yet.`);
  }
  return { host: target.ssh_host, port: target.ssh_port };
}

function describe(target: SshTarget, options: SshOptions): string {
  const { host, port } = endpointOf(target);
  return `${options.user ?? "root"}@${host}:${port}`;
}

/** Connects and logs in, runs `use`, and always closes the connection. */
async function withConnection<T>(target: SshTarget, options: SshOptions, use: (connection: Client) => Promise<T>): Promise<T> {
  const { host, port } = endpointOf(target);
  const connection = new (ssh2().Client)();
  const where = describe(target, options);
  const config: ConnectConfig = {
    host,
    port,
    username: options.user ?? "root",
    privateKey: options.privateKey,
    passphrase: options.passphrase,
    readyTimeout: options.connectTimeoutMs ?? 20_000,
    hostVerifier: options.hostKey ? hostKeyCheck(options.hostKey) : undefined,
  };
  await new Promise<void>((resolve, reject) => {
    connection.once("ready", resolve);
    connection.once("error", (error) => reject(new SshError(`SSH to ${where} failed: ${error.message}`)));
    connection.connect(config);
  });
  // An error after login fails the call in progress (through its own handlers); this keeps it from being thrown.
  connection.on("error", () => undefined);
  try {
    return await use(connection);
  } finally {
    connection.end();
  }
}

function hostKeyCheck(expected: string): (key: Buffer) => boolean {
  const parsed = ssh2().utils.parseKey(expected);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new SshError(`hostKey is not one OpenSSH public key line: ${parsed instanceof Error ? parsed.message : "several keys"}`);
  const blob = parsed.getPublicSSH();
  return (key: Buffer) => blob.equals(key);
}

function runCommand(connection: Client, command: string, options: ExecOptions): Promise<ExecResult> {
  const max = options.maxOutputBytes ?? 16 << 20;
  return new Promise((resolve, reject) => {
    connection.exec(command, (error, channel: ClientChannel) => {
      if (error) return reject(new SshError(`could not start the command: ${error.message}`));
      const stdout = new TailBuffer(max);
      const stderr = new TailBuffer(max);
      let exitCode: number | null = null;
      let signal: string | null = null;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // Ask the server to end it, then close the channel: a server that ignores signals still loses the session.
        channel.signal("KILL");
        channel.close();
      }, options.timeoutMs ?? 600_000);
      channel.on("data", (chunk: Buffer) => stdout.push(chunk));
      channel.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
      channel.on("exit", (code: number | null, signalName?: string) => {
        exitCode = typeof code === "number" ? code : null;
        signal = signalName ?? null;
      });
      channel.on("close", () => {
        clearTimeout(timer);
        resolve({ exitCode, signal, stdout: stdout.text(), stderr: stderr.text(), timedOut, droppedBytes: stdout.dropped + stderr.dropped });
      });
      channel.end(options.stdin);
    });
  });
}

type Sftp = Parameters<Parameters<Client["sftp"]>[0]>[1];

function sftpCall(connection: Client, call: (sftp: Sftp, done: (error?: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    connection.sftp((error, sftp) => {
      if (error) return reject(new SshError(`SFTP is not available: ${error.message}`));
      call(sftp, (failure) => {
        sftp.end();
        if (failure) reject(new SshError(`copy failed: ${failure.message}`));
        else resolve();
      });
    });
  });
}
