import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { userCacheDir } from "../../sdk/cache-dir";
import { madeWhole } from "../../sdk/made-whole";

/**
 * The layer every emulated machine's root filesystem has between this computer's system folders and the machine's
 * own writable layer (./machine-space.ts): the folders of /etc, /opt, /srv, /var and /usr/local, and /usr's first
 * two levels, as empty folders, and copies of /etc's files, all owned by the machines' root user.
 *
 * Why: a machine's root is an unprivileged user of this computer (./isolation.ts), so the system's files, owned by
 * this computer's root, are strangers' files to it, and overlayfs lets it write only where it owns the folder. With
 * this layer it owns those folders and /etc's files: a setup creates, replaces and deletes files there (written into
 * its own layer, never onto this computer), and edits /etc's files in place, as root in a container does. Deeper
 * in /usr, and files outside /etc, stay this computer's: deleting or replacing them works, writing into them does not.
 *
 * Built once per state of those folders (a key over their listing) in the user's cache, and shared by every machine
 * read-only, so a machine's start copies nothing. Only what every user of this computer may read is taken.
 */

/** The folders whose whole tree of folders the layer has; the rest of each top folder down to `DEPTH`. */
const WHOLE = ["etc", "opt", "srv", "var", "usr/local"];
const DEPTH = 3;

/** The top folders of this computer a machine sees (through the layers), and its top-level links (merged /usr). */
export interface SystemFolders {
  /** Real folders at the root, each overlaid in the machine: `etc`, `usr`, ... */
  folders: string[];
  /** Links at the root (`bin` → `usr/bin`), made as they are in the machine. */
  links: Record<string, string>;
}

const SYSTEM = ["etc", "opt", "srv", "usr", "var", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

export function systemFolders(): SystemFolders {
  const found: SystemFolders = { folders: [], links: {} };
  for (const name of SYSTEM) {
    const entry = lstat(`/${name}`);
    if (entry?.isSymbolicLink()) found.links[name] = fs.readlinkSync(`/${name}`);
    else if (entry?.isDirectory()) found.folders.push(name);
  }
  return found;
}

type Entry = { kind: "dir"; path: string } | { kind: "file"; path: string; stat: fs.Stats } | { kind: "link"; path: string; target: string };

/** The layer this process took, by the folders and owner asked for. */
const taken = new Map<string, string>();

/**
 * The layer's folder for the machines' root user `owner` (this computer's uid it maps to), made if this state of the
 * system folders has none yet. The folders are read once per process: a machine's start pays nothing for it.
 */
export function baseLayer(folders: string[], owner: number | undefined): string {
  const asked = JSON.stringify([folders, owner ?? null, userCacheDir()]);
  const known = taken.get(asked);
  if (known && fs.existsSync(known)) return known;
  const dir = takeLayer(folders, owner);
  taken.set(asked, dir);
  return dir;
}

function takeLayer(folders: string[], owner: number | undefined): string {
  const entries = listing(folders);
  const key = createHash("sha256").update(JSON.stringify([owner ?? null, entries.map(describe)])).digest("hex").slice(0, 16);
  const parent = layersFolder(folders);
  const dir = path.join(parent, key);
  if (fs.existsSync(dir)) {
    // In use: kept from the pruning of another emulator's.
    fs.utimesSync(dir, new Date(), new Date());
  } else {
    madeWhole(dir, (stage) => fill(stage, entries, owner));
    prune(parent, key);
  }
  return dir;
}

/**
 * Where the layers are kept: the user's cache, unless it lies in a system folder (a service account's home in
 * /var): overlayfs refuses a lower layer inside another one. Then a folder of the user's own in the temporary folder.
 */
function layersFolder(folders: string[]): string {
  const inSystem = (dir: string) => folders.some((top) => resolved(dir).startsWith(`/${top}/`));
  const cached = path.join(userCacheDir(), "machine-base");
  if (!inSystem(cached)) return cached;
  const temporary = path.join(os.tmpdir(), `gpu-rental-machine-base-${process.getuid?.() ?? "user"}`);
  fs.mkdirSync(temporary, { recursive: true, mode: 0o700 });
  const made = fs.lstatSync(temporary);
  // A folder another user made there first (or a link) is not taken.
  if (!inSystem(temporary) && made.isDirectory() && made.uid === process.getuid?.()) return temporary;
  throw new Error(`the machines' base layer has no folder outside this computer's system folders: ${cached} and ${temporary} lie in one (set GPU_RENTAL_CACHE to a folder elsewhere)`);
}

/** A path with its links resolved, as far as it exists (the rest as it is). */
function resolved(dir: string): string {
  for (let existing = dir, rest = ""; ; rest = path.join(path.basename(existing), rest), existing = path.dirname(existing)) {
    if (fs.existsSync(existing) || existing === path.dirname(existing)) return path.join(fs.realpathSync(existing), rest);
  }
}

function describe(entry: Entry): string {
  if (entry.kind === "file") return `${entry.path} ${entry.stat.size} ${entry.stat.mtimeMs} ${entry.stat.mode}`;
  return entry.kind === "link" ? `${entry.path} -> ${entry.target}` : entry.path;
}

/** What the layer holds: folders, and /etc's files and links, that everyone may read. */
function listing(folders: string[]): Entry[] {
  const entries: Entry[] = [];
  const walk = (relative: string, depth: number, whole: boolean) => {
    entries.push({ kind: "dir", path: relative });
    if (!whole && depth >= DEPTH) return;
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(`/${relative}`, { withFileTypes: true });
    } catch {
      return;
    }
    for (const name of names) {
      const child = `${relative}/${name.name}`;
      const inWhole = whole || WHOLE.includes(child);
      if (name.isDirectory()) {
        if (everyoneMay(`/${child}`, 0o005)) walk(child, depth + 1, inWhole);
      } else if (child.startsWith("etc/")) {
        entries.push(...etcEntry(child, name));
      }
    }
  };
  for (const folder of folders) walk(folder, 1, WHOLE.includes(folder));
  return entries;
}

/**
 * A file or link of /etc as the layer holds it: a file everyone may read, copied; a link, as it is, except
 * resolv.conf's, which commonly leads into /run (systemd-resolved's), a folder the machine has of its own: its text.
 */
function etcEntry(relative: string, dirent: fs.Dirent): Entry[] {
  if (dirent.isSymbolicLink() && relative !== "etc/resolv.conf") return [{ kind: "link", path: relative, target: fs.readlinkSync(`/${relative}`) }];
  const stat = statOf(`/${relative}`);
  return stat?.isFile() && stat.mode & 0o004 ? [{ kind: "file", path: relative, stat }] : [];
}

function fill(stage: string, entries: Entry[], owner: number | undefined): void {
  for (const entry of entries) {
    const target = path.join(stage, entry.path);
    if (entry.kind === "dir") fs.mkdirSync(target, { recursive: true, mode: 0o755 });
    else if (entry.kind === "link") fs.symlinkSync(entry.target, target);
    else copyReadable(`/${entry.path}`, target, entry.stat);
    if (owner !== undefined) fs.lchownSync(target, owner, owner);
  }
  fs.chmodSync(stage, 0o755);
  if (owner !== undefined) fs.lchownSync(stage, owner, owner);
}

function copyReadable(source: string, target: string, stat: fs.Stats): void {
  try {
    fs.copyFileSync(source, target);
    fs.chmodSync(target, stat.mode & 0o7777);
  } catch {
    // gone or unreadable meanwhile: the machine sees this computer's file
  }
}

/** Layers of earlier states of the system folders, untouched for a day (each emulator touches its own when it takes it). */
function prune(parent: string, keep: string): void {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of fs.readdirSync(parent)) {
    const dir = path.join(parent, name);
    if (name !== keep && (statOf(dir)?.mtimeMs ?? Infinity) < dayAgo) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the `bits` of "others" are set on the file (the walk has checked the folders above it): what any user may do. */
function everyoneMay(file: string, bits: number): boolean {
  const stat = statOf(file);
  return !!stat && (stat.mode & bits) === bits;
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

function lstat(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}
