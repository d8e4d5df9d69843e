import * as fs from "node:fs";
import * as path from "node:path";
import { ProjectRuntime, runtimeOf } from "./python-env";

/**
 * The runtime a project's Pulumi.yaml declares: `runtime: python`, or a mapping of `name` and `options` in block
 * or flow style. Only this field is read, with just enough YAML for it: gpu-rental carries no YAML parser, and
 * asking the CLI would be a process of its own.
 */
export function projectRuntime(programDir: string): ProjectRuntime {
  const file = path.join(programDir, "Pulumi.yaml");
  const lines = fs.readFileSync(file, "utf8").split(/\r?\n/).map(uncommented);
  const at = lines.findIndex((line) => /^runtime\s*:(\s|$)/.test(line));
  if (at < 0) throw new Error(`${file} declares no runtime`);
  const rest = lines[at].replace(/^runtime\s*:/, "").trim();
  const following = lines.slice(at + 1);
  const runtime = rest.startsWith("{") ? flowMapping([rest, ...following].join(" ")) : rest ? scalar(rest) : blockMapping(following);
  return runtimeOf({ runtime: runtime as string | { name: string; options?: object } });
}

/** The line without its comment (a `#` at its start or after a blank, outside quotes). */
function uncommented(line: string): string {
  let quote = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) quote = c === quote ? "" : quote;
    else if (c === '"' || c === "'") quote = /[\s:[{,-]/.test(line[i - 1] ?? " ") ? c : "";
    else if (c === "#" && /\s/.test(line[i - 1] ?? " ")) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** The indented lines under a key as a mapping (`key: value` and nested `key:` lines; anything else is skipped). */
function blockMapping(lines: string[]): Record<string, unknown> {
  const end = lines.findIndex((line) => line.trim() !== "" && !/^\s/.test(line));
  return nested(lines.slice(0, end < 0 ? lines.length : end).filter((line) => line.trim()), 0).value;
}

function nested(lines: string[], start: number): { value: Record<string, unknown>; next: number } {
  const indent = indentOf(lines[start] ?? "");
  const value: Record<string, unknown> = {};
  let i = start;
  while (i < lines.length && indentOf(lines[i]) >= indent) {
    const match = indentOf(lines[i]) === indent ? /^\s*([^\s:][^:]*?)\s*:(?:\s+(.*))?$/.exec(lines[i]) : null;
    i++;
    if (!match) continue;
    const [, key, rest] = match;
    if (rest) value[key] = rest.startsWith("{") ? flowMapping(rest) : scalar(rest);
    else if (i < lines.length && indentOf(lines[i]) > indent) ({ value: value[key], next: i } = nested(lines, i));
    else value[key] = null;
  }
  return { value, next: i };
}

function indentOf(line: string): number {
  return /^\s*/.exec(line)![0].length;
}

/** A flow mapping, `{name: python, options: {virtualenv: venv}}`: mappings and scalars, plain or quoted. */
function flowMapping(text: string): unknown {
  const tokens = text.match(/[{},]|:(?=\s|$)|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|(?:[^{},:\s]|:(?!\s|$))(?:[^{},:]|:(?!\s|$))*/g) ?? [];
  let at = 0;
  const value = (): unknown => {
    if (tokens[at] !== "{") return scalar(tokens[at++] ?? "");
    at++;
    const mapping: Record<string, unknown> = {};
    while (at < tokens.length && tokens[at] !== "}") {
      const key = String(scalar(tokens[at++]));
      const hasValue = tokens[at] === ":" && ![",", "}"].includes(tokens[++at]);
      mapping[key] = hasValue ? value() : null;
      if (tokens[at] === ",") at++;
    }
    at++;
    return mapping;
  };
  return value();
}

/** A YAML scalar: quoted, a boolean, null, a number, or plain text. */
function scalar(text: string): unknown {
  const trimmed = text.trim();
  if (/^".*"$/s.test(trimmed)) return JSON.parse(trimmed);
  if (/^'.*'$/s.test(trimmed)) return trimmed.slice(1, -1).replace(/''/g, "'");
  if (/^(true|false)$/i.test(trimmed)) return trimmed.toLowerCase() === "true";
  if (/^(null|~)?$/i.test(trimmed)) return null;
  if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}
