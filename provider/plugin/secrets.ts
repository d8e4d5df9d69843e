/**
 * Secrets as the engine passes them to a provider that accepts secrets: `{ <sig>: <secret sig>, value }`. The
 * lifecycle works on plain values; the plugin unwraps inputs and wraps the kind's secret properties again, so
 * they stay encrypted in state and masked in output whatever the program's language.
 */
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

export function isSecret(value: unknown): value is { value: unknown } {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** A copy with every secret replaced by its value, at any depth. */
export function revealed<T>(value: T): T {
  if (isSecret(value)) return revealed(value.value) as T;
  if (Array.isArray(value)) return value.map(revealed) as T;
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealed(v)])) as T;
  return value;
}

/** A copy with the named top-level properties wrapped as secrets (null and absent ones left as they are). */
export function withSecrets(props: object, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(props).map(([k, v]) => [k, names.includes(k) && v !== null && v !== undefined && !isSecret(v) ? { [SIG_KEY]: SECRET_SIG, value: v } : v]),
  );
}
