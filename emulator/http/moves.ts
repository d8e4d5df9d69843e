/**
 * The live service's moves (emulator/INSTANCES.md, "The live service's moves"): endpoints it retired, and the
 * answer it gives there now, in its own words (docs/service-facts.md#where-the-live-service-has-moved-on).
 */
export const DEPRECATED_ENDPOINT = "deprecated_endpoint";

/** Retired path → the path to use instead. */
export const RETIRED_PATHS: Record<string, string> = { "/api/v0/instances/": "/api/v1/instances/" };

/**
 * The status the emulator answers a retired endpoint with. The live service's status was not reported: 410 Gone
 * is HTTP's word for a resource removed on purpose, and an error status makes a client that ignores bodies fail
 * too. Clients must not rely on it: the body (`success: false`) is what says it, at any status (faults can
 * answer the same body with a 200).
 */
export const RETIRED_STATUS = 410;

/** `{"success": false, "error": "deprecated_endpoint", "msg": "<path> is deprecated. Use <new> instead."}`. */
export function deprecationBody(path: string): { success: false; error: string; msg: string } {
  const instead = RETIRED_PATHS[path];
  return { success: false, error: DEPRECATED_ENDPOINT, msg: `${path} is deprecated.${instead ? ` Use ${instead} instead.` : ""}` };
}
