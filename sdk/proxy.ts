import { isIP } from "node:net";

/**
 * The axios `proxy` setting for a service URL. axios itself reads HTTPS_PROXY / HTTP_PROXY / NO_PROXY (and
 * their lowercase forms) as Node tools do, tunnelling HTTPS through CONNECT, when the setting is left
 * undefined; a loopback service (the local emulator) is always reached directly, whatever the environment says,
 * since a proxy elsewhere could not reach this machine's loopback.
 */
export function proxyOptionFor(apiUrl: string): false | undefined {
  return isLoopback(new URL(apiUrl).hostname) ? false : undefined;
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1 (with or without brackets). */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1" || host.startsWith("::ffff:127.");
  return false;
}
