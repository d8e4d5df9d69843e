import { badRequest } from "./errors";

/**
 * Docker flags as the service reads them, in one place: a template's `env` flag string (`-e K=V -p 8080:8080`),
 * the `-p` keys of an instance's env, and the `-u <user> -p <token> <registry>` of a registry login.
 */

/** Splits a docker flag string into words as a shell would, honouring single and double quotes. */
function words(flags: string): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < flags.length; i++) {
    const c = flags[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < flags.length) word += flags[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw badRequest("invalid_args", `env: unbalanced ${quote} in ${JSON.stringify(flags)}; close the quote.`);
  if (inWord) out.push(word);
  return out;
}

/**
 * The template's `env` flag string as the env object of instance creation: `-e K=V` gives `K: "V"`,
 * `-p H:C` gives `"-p H:C": "1"` (a port mapping), `-v V.<id>:<path>` gives `"-v V.<id>:<path>": "1"` (a volume
 * mount). Other docker flags are ignored, as the service ignores them.
 */
export function envFromFlags(flags: string): Record<string, string> {
  const env: Record<string, string> = {};
  const list = words(flags);
  for (let i = 0; i < list.length; i++) {
    const word = list[i];
    const inline = /^(-e|--env|-p|--publish)=(.*)$/.exec(word);
    const flag = inline ? inline[1] : word;
    if (flag === "-v" || flag === "--volume") {
      // Only a volume of the account's mounts: a bind of the host's own folders is ignored, as other flags are.
      const mount = list[++i];
      if (mount !== undefined && volumeFlag(`-v ${mount}`)) env[`-v ${mount}`] = "1";
      continue;
    }
    if (!["-e", "--env", "-p", "--publish"].includes(flag)) continue;
    const value = inline ? inline[2] : list[++i];
    if (value === undefined) throw badRequest("invalid_args", `env: ${flag} needs a value, e.g. "-e NAME=value -p 8080:8080".`);
    if (flag === "-e" || flag === "--env") {
      const eq = value.indexOf("=");
      if (eq <= 0) throw badRequest("invalid_args", `env: ${JSON.stringify(value)} after ${flag} is not NAME=value.`);
      env[value.slice(0, eq)] = value.slice(eq + 1);
    } else {
      if (!/^(\d+:)?\d+(\/(tcp|udp))?$/.test(value)) {
        throw badRequest("invalid_args", `env: ${JSON.stringify(value)} after ${flag} is not a port mapping host:container.`);
      }
      env[`-p ${value}`] = "1";
    }
  }
  return env;
}


/** `"-p 8080:8080"` → `"8080/tcp"`; undefined for an env key that is not a port mapping. */
export function portFlag(key: string): string | undefined {
  const mapped = /^-p\s+(?:\d+:)?(\d+)(?:\/(tcp|udp))?$/.exec(key.trim());
  return mapped ? `${mapped[1]}/${mapped[2] ?? "tcp"}` : undefined;
}

/** `"-v V.800001:/data"` → the volume's id and where it is mounted; undefined for a key that is not a volume mount. */
export function volumeFlag(key: string): { volumeId: number; path: string } | undefined {
  const mount = /^-v\s+V\.(\d+):(\/[A-Za-z0-9._/-]*)$/.exec(key.trim());
  return mount ? { volumeId: Number(mount[1]), path: mount[2] } : undefined;
}

/** A mount path that stays where it says: absolute, with no `.` or `..` segment. */
export function plainMountPath(mountPath: string): boolean {
  return mountPath.startsWith("/") && !mountPath.split("/").some((segment) => segment === "." || segment === "..");
}

/** `-u <user> -p <token> <registry>` → the user and registry; the token is never kept nor shown back. */
export function registryLogin(imageLogin: string | undefined): { user: string | null; repo: string | null } {
  if (!imageLogin) return { user: null, repo: null };
  const user = /(?:^|\s)-u\s+(\S+)/.exec(imageLogin)?.[1] ?? null;
  const repo = imageLogin.replace(/(?:^|\s)-[up]\s+\S+/g, " ").trim() || null;
  return { user, repo };
}
