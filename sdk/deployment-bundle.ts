import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";

/**
 * A deployment's bundle as the service's public client makes it (docs/service-facts.md#deployments): a gzipped tar
 * of `./config.json`, the code (`./deployment.py`, or the package `./deployment/`) and extra files. Its `file_hash`
 * is not of these bytes but of their sources: SHA-256 of the config's text, then of each code file's name and text in
 * the order a sorted walk finds them (lines whose comment is `#!VAST_IGNORE_CHANGES` left out of `.py` files), then
 * of each extra file's name and bytes. The SDK makes bundles this way; the emulator checks uploads with the same code.
 */

export interface BundleEntry {
  /** Its name in the archive without a leading `./` (`deployment/__init__.py`). */
  name: string;
  /** The name as the archive has it (extra files are hashed under it). */
  raw: string;
  type: "file" | "dir" | "other";
  data: Buffer;
}

/** What a deployment's workers read first: its name (the code declares a deployment of that name) and its setup. */
export interface BundleConfig {
  name: string;
  pip_installs?: string[];
  apt_gets?: string[];
  envs?: [string, string][];
  runs?: (string | string[])[];
}

export interface Bundle {
  bytes: Buffer;
  /** The content hash the put announces (`file_hash`). */
  hash: string;
  /** The bundle's size in bytes (`file_size`). */
  size: number;
}

/** The content hash of a bundle's entries, as the client computes it from their sources. */
export function contentHash(entries: BundleEntry[]): string | undefined {
  const files = entries.filter((e) => e.type === "file");
  const config = files.find((e) => e.name === "config.json");
  const code = files.filter(isCode);
  if (!config || !code.length) return undefined;
  const hash = createHash("sha256").update(config.data);
  for (const entry of [...code].sort(walkOrder)) hash.update(`./${entry.name}`).update(withoutIgnoredLines(entry));
  for (const entry of files.filter((e) => e !== config && !isCode(e))) hash.update(entry.raw).update(entry.data);
  return hash.digest("hex");
}

const isCode = (e: BundleEntry) => e.name === "deployment.py" || e.name.startsWith("deployment/");

/** Why the bytes are not the bundle of that hash; undefined when they are. */
export function bundleProblem(bytes: Buffer, fileHash: string): string | undefined {
  let entries: BundleEntry[];
  try {
    entries = readTar(gunzipSync(bytes));
  } catch (error) {
    return `it is not a gzipped tar (${(error as Error).message})`;
  }
  if (!entries.some((e) => e.type === "file" && e.name === "config.json")) return "it has no ./config.json";
  if (!entries.some((e) => e.type === "file" && isCode(e))) return "it has neither ./deployment.py nor ./deployment/";
  const actual = contentHash(entries)!;
  return actual === fileHash ? undefined : `its content hash is ${actual}, not ${fileHash}`;
}

/**
 * The bundle of a folder of Python code: the folder is the package `deployment` (its `__init__.py` imports what
 * declares the deployment's functions), or a single `.py` file, the module `deployment`. Refused: a folder that is
 * missing, unreadable, empty, or not a package.
 */
export function bundleFolder(folder: string, config: BundleConfig): Bundle {
  const configText = pythonJson({ name: config.name, pip_installs: config.pip_installs ?? [], apt_gets: config.apt_gets ?? [], envs: config.envs ?? [], runs: config.runs ?? [] });
  const entries: BundleEntry[] = [{ name: "config.json", raw: "./config.json", type: "file", data: Buffer.from(configText) }];
  // A single module (`app.py`), as the service's client bundles the file its remote functions are in.
  if (folder.endsWith(".py") && fs.statSync(folder, { throwIfNoEntry: false })?.isFile()) {
    entries.push({ name: "deployment.py", raw: "./deployment.py", type: "file", data: fs.readFileSync(folder) });
    return made(entries, []);
  }
  const files = listFiles(folder);
  if (!files.length) throw new Error(`the code folder ${folder} has no files: put the deployment's Python package there`);
  if (!files.includes("__init__.py")) throw new Error(`the code folder ${folder} has no __init__.py: it is imported as the package \`deployment\`, which must declare the deployment`);
  const dirs = new Set<string>(["deployment"]);
  for (const file of files) {
    const parts = file.split("/");
    for (let i = 1; i < parts.length; i++) dirs.add(["deployment", ...parts.slice(0, i)].join("/"));
    entries.push({ name: `deployment/${file}`, raw: `./deployment/${file}`, type: "file", data: fs.readFileSync(path.join(folder, file)) });
  }
  return made(entries, [...dirs].sort());
}

/** The bundle of these files (and folders): its bytes, hash and size. */
function made(entries: BundleEntry[], dirs: string[]): Bundle {
  const tar = writeTar([...dirs.map((name): BundleEntry => ({ name, raw: `./${name}`, type: "dir", data: Buffer.alloc(0) })), ...entries]);
  // No time in the gzip header (Node writes none): the same code makes the same bytes.
  const bytes = gzipSync(tar);
  return { bytes, hash: contentHash(entries)!, size: bytes.length };
}

/** JSON as Python's `json.dumps` writes it (`", "` and `": "`, non-ASCII escaped): the client hashes that text. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (value && typeof value === "object") return `{${Object.entries(value).map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`).join(", ")}}`;
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The folder's files, relative, `/`-separated; caches and hidden files left out. */
function listFiles(folder: string, rel = ""): string[] {
  let names: fs.Dirent[];
  try {
    names = fs.readdirSync(path.join(folder, rel), { withFileTypes: true });
  } catch (error) {
    throw new Error(`the code folder ${path.join(folder, rel)} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return names
    .filter((d) => !d.name.startsWith(".") && d.name !== "__pycache__")
    .flatMap((d) => {
      const child = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory()) return listFiles(folder, child);
      return d.isFile() ? [child] : [];
    })
    .sort();
}

/** The order of a top-down walk with sorted names: a folder's files before its subfolders, each by name. */
function walkOrder(a: BundleEntry, b: BundleEntry): number {
  const pa = a.name.split("/");
  const pb = b.name.split("/");
  let k = 0;
  while (pa[k] === pb[k]) k++;
  const aFile = k === pa.length - 1;
  const bFile = k === pb.length - 1;
  if (aFile !== bFile) return aFile ? -1 : 1;
  return Buffer.compare(Buffer.from(pa[k]), Buffer.from(pb[k]));
}

// The client's scan of a Python line, outside and inside triple-quoted strings (bytes, read as latin1 text).
const CLOSE: Record<string, RegExp> = { '"""': /^(?:[^\\]|\\.)*?"""/, "'''": /^(?:[^\\]|\\.)*?'''/ };
const TOKEN = /"""(?:[^\\]|\\.)*?"""|'''(?:[^\\]|\\.)*?'''|(""")|(''')|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|(#)/g;
const IGNORE = "!VAST_IGNORE_CHANGES";

/** A `.py` file's bytes without its ignored lines (other files as they are). */
function withoutIgnoredLines(entry: BundleEntry): Buffer {
  if (!entry.name.endsWith(".py")) return entry.data;
  let open: string | undefined;
  const kept: string[] = [];
  for (const line of entry.data.toString("latin1").split("\n")) {
    const [ignored, next] = scanLine(line, open);
    open = next;
    if (!ignored) kept.push(line);
  }
  return Buffer.from(kept.join("\n"), "latin1");
}

function scanLine(line: string, open: string | undefined): [boolean, string | undefined] {
  let from = 0;
  if (open !== undefined) {
    const closed = CLOSE[open].exec(line);
    if (!closed) return [false, open];
    from = closed[0].length;
  }
  TOKEN.lastIndex = from;
  for (let m = TOKEN.exec(line); m; m = TOKEN.exec(line)) {
    if (m[1]) return [false, '"""'];
    if (m[2]) return [false, "'''"];
    if (m[3]) return [line.slice(m.index + 1).replace(/^[ \t\n\r\v\f]+|[ \t\n\r\v\f]+$/g, "") === IGNORE, undefined];
  }
  return [false, undefined];
}

/** The entries of a tar (ustar, with pax `path` records). */
export function readTar(tar: Buffer): BundleEntry[] {
  const entries: BundleEntry[] = [];
  let paxPath: string | undefined;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(field(header, 124, 12).trim() || "0", 8);
    const flag = String.fromCharCode(header[156] || 48);
    const prefix = field(header, 345, 155);
    const data = tar.subarray(at + 512, at + 512 + size);
    if (data.length !== size) throw new Error("the archive is cut short");
    at += 512 + Math.ceil(size / 512) * 512;
    if (flag === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1] ?? paxPath;
      continue;
    }
    if (flag === "g") continue;
    const raw = paxPath ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    paxPath = undefined;
    const name = raw.replace(/^(\.?\/)+/, "").replace(/\/+$/, "");
    entries.push({ name, raw, type: flag === "0" || flag === "7" ? "file" : flag === "5" ? "dir" : "other", data: Buffer.from(data) });
  }
  return entries;
}

/** A ustar archive of the entries (owned by root, no times: the same entries make the same bytes). */
function writeTar(entries: BundleEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.type === "dir" ? `${entry.raw}/` : entry.raw;
    if (Buffer.byteLength(name) > 100) throw new Error(`the path ${name} is over 100 bytes: shorten it`);
    const header = Buffer.alloc(512);
    header.write(name, 0, 100, "utf8");
    header.write(octal(entry.type === "dir" ? 0o755 : 0o644, 8), 100);
    header.write(octal(0, 8), 108);
    header.write(octal(0, 8), 116);
    header.write(octal(entry.data.length, 12), 124);
    header.write(octal(0, 12), 136);
    header.write(entry.type === "dir" ? "5" : "0", 156);
    header.write("ustar\u000000", 257);
    header.write("root", 265);
    header.write("root", 297);
    header.fill(" ", 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148);
    blocks.push(header, entry.data, Buffer.alloc((512 - (entry.data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, "0")}\u0000`;

function field(buffer: Buffer, start: number, length: number): string {
  const bytes = buffer.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? length : end).toString("utf8");
}
