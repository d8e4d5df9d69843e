import { GpuRentalClient, ClientOptions } from "../../sdk";
import { Clock, startEmulator, EmulatorOptions, RunningEmulator } from "../../emulator";

export interface TestEmulator extends RunningEmulator {
  /** A client of the seeded user, with quick retries. */
  client(options?: ClientOptions): GpuRentalClient;
  /** Another account (a user of its own) and a key of it: for programs that manage several accounts. */
  account(email: string): { id: number; key: string };
}

/**
 * Starts a real emulator over HTTP on a free loopback port. The clock is frozen unless the options say
 * otherwise, so tests move time with `marketplace.clock.advance()` instead of sleeping. Its rate limits are off
 * unless the options say otherwise (`rateLimits: "service"`): a test about something else is not slowed by them.
 */
export async function emulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const running = await startEmulator({ clock: new Clock("frozen"), rateLimits: "off", ...options });
  return {
    ...running,
    client: (clientOptions = {}) =>
      new GpuRentalClient({ apiUrl: running.url, apiKey: running.apiKey, minRetryDelayMs: 5, maxRetryDelayMs: 20, ...clientOptions }),
    account: (email) => {
      const { id } = running.marketplace.accounts.addUser({ email });
      return { id, key: running.marketplace.accounts.issueKey(id, { name: "team" }).key };
    },
  };
}

/** Raw HTTP against the emulator, for asserting exact statuses and bodies. */
export async function http(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the assertion on the body will say so
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
