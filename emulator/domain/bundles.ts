import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";

/**
 * A deployment's bundle as the public client makes it (docs/service-facts.md#deployments): a gzipped tar of
 * `./config.json`, the code (`./deployment.py`, or the package `./deployment/`) and extra files. Its announced
 * `file_hash` is not of these bytes but of their sources: SHA-256 of the config's text, then of each code file's
 * name and text in the order a sorted walk finds them (lines whose comment is `#!VAST_IGNORE_CHANGES` left out of
 * `.py` files), then of each extra file's name and bytes. The emulator computes it again from the bundle.
 */

interface Entry {
  name: string;
  /** The name as the archive has it (extra files are hashed under it). */
  raw: string;
  type: "file" | "dir" | "other";
  data: Buffer;
}

/** Why the bytes are not the bundle of that hash; undefined when they are. */
export function checkBundle(file: Buffer, fileHash: string): string | undefined {
  let entries: Entry[];
  try {
    entries = readTar(gunzipSync(file));
  } catch (error) {
    return `it is not a gzipped tar (${(error as Error).message})`;
  }
  const files = entries.filter((e) => e.type === "file");
  const config = files.find((e) => e.name === "config.json");
  if (!config) return "it has no ./config.json";
  const isCode = (e: Entry) => e.name === "deployment.py" || e.name.startsWith("deployment/");
  const code = files.filter(isCode);
  if (!code.length) return "it has neither ./deployment.py nor ./deployment/";
  const hash = createHash("sha256").update(config.data);
  for (const entry of [...code].sort(walkOrder)) hash.update(`./${entry.name}`).update(withoutIgnoredLines(entry));
  for (const entry of files.filter((e) => e !== config && !isCode(e))) hash.update(entry.raw).update(entry.data);
  const actual = hash.digest("hex");
  return actual === fileHash ? undefined : `its content hash is ${actual}, not ${fileHash}`;
}

/** The order of a top-down walk with sorted names: a folder's files before its subfolders, each by name. */
function walkOrder(a: Entry, b: Entry): number {
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
function withoutIgnoredLines(entry: Entry): Buffer {
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

/** The entries of a tar (ustar, with pax `path` records), names without a leading `./` or `/`. */
function readTar(tar: Buffer): Entry[] {
  const entries: Entry[] = [];
  let paxPath: string | undefined;
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(text(header, 124, 12).trim() || "0", 8);
    const flag = String.fromCharCode(header[156] || 48);
    const prefix = text(header, 345, 155);
    const data = tar.subarray(at + 512, at + 512 + size);
    if (data.length !== size) throw new Error("the archive is cut short");
    at += 512 + Math.ceil(size / 512) * 512;
    if (flag === "x") {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1] ?? paxPath;
      continue;
    }
    if (flag === "g") continue;
    const raw = paxPath ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    paxPath = undefined;
    const name = raw.replace(/^(\.?\/)+/, "").replace(/\/+$/, "");
    entries.push({ name, raw, type: flag === "0" || flag === "7" ? "file" : flag === "5" ? "dir" : "other", data: Buffer.from(data) });
  }
  return entries;
}

function text(buffer: Buffer, start: number, length: number): string {
  const field = buffer.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? length : end).toString("utf8");
}
