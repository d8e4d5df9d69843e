import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";

/**
 * The provider's messages in the words of the program's language: a Python program sets `max_lifetime`, a Go one
 * `MaxLifetime`, so a refusal that names `maxLifetime` (the schema's spelling, which TypeScript and YAML programs
 * use) would name something the user never wrote. The language is the runtime of the Pulumi.yaml beside which the
 * engine starts the plugin (its working folder); without one, the schema's spelling stays.
 */
export interface ProgramWords {
  /** A message, every property name of the schema in it as the program spells it. */
  text(message: string): string;
  /**
   * A check failure in the program's words. The engine prints a failure's property with the input's value, which it
   * looks up by the schema's name: a property the program spells otherwise is left to the reason, which names it.
   */
  failure(failure: { property: string; reason: string }): { property: string; reason: string };
}

const SPELLINGS: Record<string, (name: string) => string> = {
  python: (name) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase(),
  go: (name) => name.charAt(0).toUpperCase() + name.slice(1),
  dotnet: (name) => name.charAt(0).toUpperCase() + name.slice(1),
};

/**
 * The words of the program in `dir`, for the property names of the schema (`names`). Worked out at first use, not
 * at the plugin's start (which every `up` waits for).
 */
export function programWords(names: () => Iterable<string>, dir = process.cwd()): ProgramWords {
  let words: ProgramWords | undefined;
  const get = () => (words ??= wordsOf(SPELLINGS[runtimeIn(dir) ?? ""], names));
  return { text: (message) => get().text(message), failure: (failure) => get().failure(failure) };
}

function wordsOf(spell: ((name: string) => string) | undefined, names: () => Iterable<string>): ProgramWords {
  if (!spell) return AS_IN_SCHEMA;
  // Only the names of several words (camelCase) that the language spells otherwise: a name of one word (`image`,
  // `label`) is also a word of the message's prose. Longest first (so `adoptIds` is not read as `adoptId` + `s`).
  const changed = [...new Set(names())].filter((name) => /[A-Z]/.test(name) && spell(name) !== name).sort((a, b) => b.length - a.length);
  const pattern = changed.length ? new RegExp(`\\b(${changed.join("|")})\\b`, "g") : undefined;
  const text = (message: string) => (pattern ? message.replace(pattern, (name) => spell(name)) : message);
  return {
    text,
    failure: ({ property, reason }) => ({ property: changed.includes(property) ? "" : property, reason: text(reason) }),
  };
}

/** The schema's own words (TypeScript, JavaScript and YAML programs use them). */
export const AS_IN_SCHEMA: ProgramWords = { text: (message) => message, failure: (failure) => failure };

/** The runtime's name in the Pulumi.yaml of `dir` (`runtime: python`, or `runtime: {name: python}`). */
function runtimeIn(dir: string): string | undefined {
  for (const file of ["Pulumi.yaml", "Pulumi.yml"]) {
    try {
      const runtime = parse(fs.readFileSync(path.join(dir, file), "utf8"))?.runtime;
      return typeof runtime === "string" ? runtime : runtime?.name;
    } catch {
      // not there, or not YAML: the next, or none
    }
  }
  return undefined;
}

/** Every property name a package schema declares: resources' inputs and outputs, object types', provider config's. */
export function schemaNames(schema: {
  resources?: Record<string, { inputProperties?: object; properties?: object }>;
  types?: Record<string, { properties?: object }>;
  config?: { variables?: object };
  provider?: { inputProperties?: object };
}): string[] {
  const objects = [
    ...Object.values(schema.resources ?? {}).flatMap((r) => [r.inputProperties, r.properties]),
    ...Object.values(schema.types ?? {}).map((t) => t.properties),
    schema.config?.variables,
    schema.provider?.inputProperties,
  ];
  return objects.flatMap((properties) => Object.keys(properties ?? {}));
}

/** The provider's methods with their errors' messages in the program's words. */
export function speakingProgramWords<P extends object>(provider: P, words: ProgramWords): P {
  return new Proxy(provider, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        try {
          return await value.apply(target, args);
        } catch (error) {
          if (error instanceof Error) {
            const said = words.text(error.message);
            error.stack = error.stack?.replace(error.message, said);
            error.message = said;
          }
          throw error;
        }
      };
    },
  });
}
