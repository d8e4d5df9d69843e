import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { MACHINE_PATH } from "./machine-setup";

/**
 * What an emulated machine's namespaces need from this computer (./machine-space.ts): Linux, util-linux's
 * `unshare`, `nsenter`, `mount` and `pivot_root` (`setpriv` too when the emulator runs as root), GNU tar, and a
 * kernel that lets a user make user namespaces and mount a tmpfs and an overlay inside them. Probed once per
 * process; where something lacks, every machine's boot fails with the reason, and its instance shows it.
 */

/**
 * This computer's user the machines' root is when the emulator runs as root: never root itself, whose files
 * they could then write. A uid of the block no distribution allocates (systemd's "unused" 1879048192 to
 * 2147483647); the machines' files are that user's.
 */
export const MACHINE_UID_UNDER_ROOT = 2_000_000_000;

/** This computer's uid the machines' root maps to: the emulator's own user, or MACHINE_UID_UNDER_ROOT under root. */
export function machineOwner(): number | undefined {
  return process.getuid?.() === 0 ? MACHINE_UID_UNDER_ROOT : undefined;
}

export interface IsolationTools {
  unshare: string;
  nsenter: string;
  tar: string;
  /** Under root: switches to MACHINE_UID_UNDER_ROOT before the namespaces are made. */
  setpriv?: string;
}

let probed: { tools?: IsolationTools; why?: string } | undefined;

/** The tools, or throws an Error saying why machines cannot run in namespaces here and what to do. */
export function isolationTools(): IsolationTools {
  probed ??= probe();
  if (!probed.tools) throw new Error(probed.why);
  return probed.tools;
}

/** Why machines cannot run here (undefined when they can); the probe runs once per process. */
export function isolationUnsupported(): string | undefined {
  probed ??= probe();
  return probed.why;
}

/** The packages of the tools, as Debian and Ubuntu name them, for the error that names what to install. */
const PACKAGES: Record<string, string> = { unshare: "util-linux", nsenter: "util-linux", mount: "mount", pivot_root: "util-linux", setpriv: "util-linux", tar: "tar" };

function probe(): { tools?: IsolationTools; why?: string } {
  if (process.platform !== "linux") return { why: `the emulated machines run in Linux namespaces; this computer runs ${process.platform}` };
  const needed = ["unshare", "nsenter", "mount", "pivot_root", "tar", ...(machineOwner() === undefined ? [] : ["setpriv"])];
  const missing = needed.filter((name) => !which(name));
  if (missing.length) {
    const packages = [...new Set(missing.map((name) => PACKAGES[name]))].join(" ");
    return { why: `this computer has no ${missing.join(", ")}, which the emulated machines' namespaces need: install ${packages} (apt-get install ${packages})` };
  }
  const tools: IsolationTools = { unshare: which("unshare")!, nsenter: which("nsenter")!, tar: which("tar")!, setpriv: machineOwner() === undefined ? undefined : which("setpriv") };
  // A user namespace with a tmpfs and an overlay in it, as each machine's start makes them.
  const script = "mount -t tmpfs gpu-rental-probe /tmp && mkdir /tmp/l /tmp/u /tmp/w /tmp/m && mount -t overlay gpu-rental-probe -o lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w /tmp/m";
  const [program, ...args] = [...asMachineOwner(tools), tools.unshare, "--user", "--map-root-user", "--mount", "--pid", "--fork", "--uts", "--ipc", "--", "/bin/sh", "-c", script];
  const tried = spawnSync(program, args, { encoding: "utf8", timeout: 10_000, cwd: "/", env: { PATH: MACHINE_PATH } });
  if (tried.status === 0) return { tools };
  const said = (tried.stderr || tried.error?.message || `status ${tried.status}`).trim();
  return {
    why:
      `this computer refuses the user namespaces the emulated machines run in (${said}): the kernel must let users make them ` +
      "(sysctl user.max_user_namespaces above 0; kernel.unprivileged_userns_clone=1 where it exists; on Ubuntu 24.04 and later, " +
      "kernel.apparmor_restrict_unprivileged_userns=0), with overlayfs; a container runs them only when it may make namespaces",
  };
}

/** What runs a command as the machines' root's user of this computer: setpriv's arguments under root, else none. */
export function asMachineOwner(tools: IsolationTools): string[] {
  const owner = machineOwner();
  if (owner === undefined || !tools.setpriv) return [];
  return [tools.setpriv, `--reuid=${owner}`, `--regid=${owner}`, "--clear-groups", "--"];
}

/**
 * A program's file, looked for where distributions put it (sbin is often off a user's PATH), its links resolved:
 * the machines' owner runs it, who may not walk the folders of a link on the emulator's PATH (a private folder).
 */
export function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
  const found = dirs.filter(Boolean).map((dir) => path.join(dir, name)).find((file) => fs.existsSync(file));
  return found && fs.realpathSync(found);
}
