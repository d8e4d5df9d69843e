import * as fs from "node:fs";
import type { PseudoTtyInfo, ServerChannel, Session } from "ssh2";
import type { InstanceRecord } from "../domain/records";
import { MachineProcess, Machines, SHELL } from "../sandbox/machines";

/** How a session reaches its instance: only while the instance is running, each time it starts something. */
export interface SessionAccess {
  machines: Machines;
  /** The instance if it exists and is running with its machine up; undefined otherwise. */
  running(instanceId: number): InstanceRecord | undefined;
}

/** Variables a client may set in a session: OpenSSH's default `AcceptEnv LANG LC_*`, as on most instances. */
const ACCEPTED_ENV = /^(LANG|LC_[A-Z_]+)$/;

/** util-linux `script` gives a shell a real terminal without a native add-on; without it, sessions get pipes. */
const SCRIPT = ["/usr/bin/script", "/bin/script"].find((file) => fs.existsSync(file));

/**
 * OpenSSH's SFTP server, where distributions put it: SFTP (and scp, which speaks it) runs it on the machine, as
 * sshd does, so paths are the machine's own. Its files are this computer's /usr, which the machine sees.
 */
export const SFTP_SERVER = ["/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/lib/ssh/sftp-server", "/usr/libexec/sftp-server"].find((file) =>
  fs.existsSync(file),
);

/** Why SFTP is not served (undefined when it is). */
export const SFTP_MISSING = SFTP_SERVER ? undefined : "this computer has no OpenSSH sftp-server, which serves SFTP and scp on the emulated machines: install openssh-sftp-server (apt-get install --no-install-recommends openssh-sftp-server)";

/**
 * One SSH session: an exec, a shell (with a terminal when one is asked for) or SFTP (OpenSSH's server), run on the
 * instance's machine. Its process ends with the session, and the session ends with its process.
 */
export function serveSession(session: Session, instanceId: number, access: SessionAccess): void {
  const env: Record<string, string> = {};
  let pty: PseudoTtyInfo | undefined;
  let running: MachineProcess | undefined;

  session.on("pty", (accept, reject, info) => {
    if (!SCRIPT) return reject?.();
    pty = info;
    accept?.();
  });
  session.on("window-change", (accept) => accept?.());
  session.on("env", (accept, reject, { key, val }) => {
    if (!ACCEPTED_ENV.test(key)) return reject?.();
    env[key] = val;
    accept?.();
  });
  session.on("signal", (accept, _reject, { name }) => {
    running?.kill(`SIG${name}` as NodeJS.Signals);
    accept?.();
  });

  const start = (accept: () => ServerChannel, reject: (() => void) | undefined, [file, args]: [string, string[]], terminal: boolean) => {
    const instance = access.running(instanceId);
    if (!instance) return reject?.();
    const stream = accept();
    try {
      running = access.machines.spawn(instance, file, args, { env: { ...env, ...(terminal && { TERM: pty!.term || "xterm" }) } });
    } catch (error) {
      stream.stderr.write(`gpu-rental emulator: ${(error as Error).message}\n`);
      stream.exit(1);
      return stream.end();
    }
    attach(stream, running, access.machines.limits.maxRunMs, terminal);
  };
  session.on("exec", (accept, reject, { command }) => start(accept, reject, commandLine(command, pty), !!pty));
  session.on("shell", (accept, reject) => start(accept, reject, commandLine(undefined, pty), !!pty));
  // Without an "sftp" listener, ssh2 hands the SFTP subsystem over as a plain channel: the server's bytes.
  session.on("subsystem", (accept, reject, { name }) => {
    if (name !== "sftp") return reject?.();
    if (SFTP_SERVER) return start(accept as () => ServerChannel, reject, [SFTP_SERVER, []], false);
    const stream = (accept as () => ServerChannel)();
    stream.stderr.write(`gpu-rental emulator: ${SFTP_MISSING}\n`);
    stream.exit(1);
    stream.end();
  });
}

/** The program a session runs: the command (or an interactive shell) through the shell, in a terminal if asked. */
function commandLine(command: string | undefined, pty: PseudoTtyInfo | undefined): [string, string[]] {
  if (!pty || !SCRIPT) return command === undefined ? [SHELL, []] : [SHELL, ["-c", command]];
  const size = pty.rows && pty.cols ? `stty rows ${pty.rows} cols ${pty.cols} 2>/dev/null; ` : "";
  // `script` runs its -c command with $SHELL -c, in a new terminal; -e passes the exit status on.
  return [SCRIPT, ["-qfec", `${size}${command ?? `exec ${SHELL} -i`}`, "/dev/null"]];
}

/** Wires a process to its channel: stdin in, stdout and stderr out (with flow control), the exit status last. */
function attach(stream: ServerChannel, process: MachineProcess, maxRunMs: number, terminal: boolean): void {
  const { child } = process;
  child.stdin!.on("error", () => undefined);
  stream.pipe(child.stdin!);
  child.stdout!.pipe(stream, { end: false });
  child.stderr!.pipe(terminal ? stream : stream.stderr, { end: false });
  child.on("close", (code, signal) => {
    if (process.timedOut()) stream.stderr.write(`\ngpu-rental emulator: killed after running ${maxRunMs / 1000} s (the emulator's limit)\n`);
    if (code !== null) stream.exit(code);
    else stream.exit((signal ?? "SIGKILL").replace(/^SIG/, ""), false, "");
    stream.end();
  });
  // The client went away (or closed the channel): what it started ends too.
  stream.on("close", () => process.kill());
}
