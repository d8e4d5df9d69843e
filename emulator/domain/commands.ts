import { badRequest } from "./errors";

/** The programs `execute` runs (docs/service-facts.md#instance-logs-and-commands): listing, sizes, removal. */
export const ALLOWED_PROGRAMS = ["ls", "rm", "du"] as const;

/** The service's limit on a command's text. */
export const MAX_COMMAND_LENGTH = 512;

/**
 * A command as `execute` takes it: one of the allowed programs and its arguments, words split at spaces (a word
 * may be quoted), nothing a shell would read otherwise (no pipes, redirections, expansions, second commands).
 */
export function allowedCommand(text: string): { program: string; args: string[] } {
  const refuse = (why: string) => badRequest("invalid_args", `Invalid command given: ${why}. Allowed: ${ALLOWED_PROGRAMS.join(", ")}, with plain arguments.`);
  if (text.length > MAX_COMMAND_LENGTH) throw refuse(`longer than ${MAX_COMMAND_LENGTH} characters`);
  if (/[;|&<>`$\\\n\r(){}*?[\]~!#]/.test(text)) throw refuse("it has characters a shell would read (only plain words and quotes are taken)");
  const words: string[] = [];
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]);
  if (/["']/.test(words.join(""))) throw refuse("an unmatched quote");
  const [program, ...args] = words;
  if (!program) throw refuse("no command");
  if (!(ALLOWED_PROGRAMS as readonly string[]).includes(program)) throw refuse(`${JSON.stringify(program.slice(0, 40))} is not an allowed command`);
  return { program, args };
}

/** The last `tail` lines of `text` that contain `filter` (the logs' options, as the service's logs take them). */
export function logSelection(text: string, options: { tail?: number; filter?: string }): string {
  let lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (options.filter) lines = lines.filter((line) => line.includes(options.filter!));
  if (options.tail !== undefined) lines = lines.slice(-options.tail || lines.length);
  return lines.length ? `${lines.join("\n")}\n` : "";
}
