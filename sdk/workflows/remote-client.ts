import { parseSearchParams } from "../search-params";

/**
 * What the service's remote-function client (`vastai.serverless.remote`) puts for a deployment besides its code
 * (docs/service-facts.md#deployments-by-name): the docker flags it compiles and the criteria it starts from. A push
 * that sends the same for the same code is the deployment that client finds by name: its `ensure_ready()` then
 * answers `exists` and makes no new version.
 */

/** The service's console, the client's default web server URL: no `VAST_API_URL` flag for it. */
export const VENDOR_CONSOLE_URL = "https://console.vast.ai";
/** The client's default autoscaler URL (its `prod` instance). */
export const VENDOR_AUTOSCALER_URL = "https://run.vast.ai";
/** The port the service's worker program serves on, as the client publishes it. */
const WORKER_PORT_FLAG = "-p 3000:3000/tcp";
/** The criteria every query of the client starts from (its search defaults), in its order. */
const CLIENT_DEFAULTS: [string, string][] = [["verified", "true"], ["rentable", "true"], ["rented", "false"]];

/** Where a client of this service reaches it: its API, and its autoscaler when that is a host of its own. */
export interface ServiceUrls {
  apiUrl: string;
  autoscalerUrl?: string;
}

/**
 * The docker flags the client compiles for a client given `webserver_url` = the API's URL and `autoscaler_url` =
 * the autoscaler's (the service's default autoscaler when the API is the service's console and none is named).
 */
export function remoteClientEnv(urls: ServiceUrls): string {
  const api = urls.apiUrl.replace(/\/+$/, "");
  const report = urls.autoscalerUrl?.replace(/\/+$/, "") ?? (api === VENDOR_CONSOLE_URL ? VENDOR_AUTOSCALER_URL : api);
  return [WORKER_PORT_FLAG, `-e REPORT_ADDR=${report}`, ...(api === VENDOR_CONSOLE_URL ? [] : [`-e VAST_API_URL=${api}`])].join(" ");
}

/**
 * The criteria text the client sends: its defaults, then the criteria its program requires (`searchParams`, the
 * CLI's text, as the client's `unparse_query()` writes it). A default whose field `searchParams` names is left out
 * (the client itself cannot override one: such a deployment is never the client's).
 */
export function remoteClientCriteria(searchParams?: string): string {
  const own = searchParams?.trim() ?? "";
  const named = own ? fieldsOf(own) : [];
  const defaults = CLIENT_DEFAULTS.filter(([field]) => !named.includes(field)).map(([field, value]) => `${field}=${value}`);
  return [...defaults, ...(own ? [own] : [])].join(" ");
}

/** The criteria a program required, from the text the client sent (its defaults taken off); undefined for none. */
export function requiredCriteria(sent: string): string | undefined {
  const defaults = remoteClientCriteria();
  const own = sent.trim() === defaults ? "" : sent.trim().startsWith(`${defaults} `) ? sent.trim().slice(defaults.length + 1) : sent.trim();
  return own || undefined;
}

/** The fields criteria name; none for text that does not read (sent as it is, the service refuses it). */
function fieldsOf(text: string): string[] {
  try {
    return Object.keys(parseSearchParams(text));
  } catch {
    return [];
  }
}
