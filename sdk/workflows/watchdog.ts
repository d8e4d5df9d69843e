import { z } from "zod";
import { ConfigurationError } from "../errors";
import type { Caller } from "../call";
import type { CreateInstanceRequest, Runtype } from "../schemas";

/**
 * A rented instance that ends itself: a watchdog started from `onstart` on the instance, so it holds when the
 * program, the CI run and the machine that rented the instance are gone. It calls the service with the instance's
 * own key (`CONTAINER_API_KEY`, which can start, stop or destroy that instance only) when the instance has run
 * `maxLifetime`, or when its GPUs (read with `nvidia-smi`) stayed below `idleThreshold` percent for `idleTimeout`.
 *
 * Its time is the machine's own clock, from the boot on (each start of a stopped instance runs onstart again, so
 * the lifetime starts again). On the emulator that is the emulator's clock (its machines' `date` and `sleep`).
 */
export interface LifetimePolicy {
  /** How long the instance may run from its boot: `"90s"`, `"15m"`, `"6h"`, `"2d"`, `"1h30m"`. */
  maxLifetime?: string;
  /** What the instance does at the end of its lifetime: `destroy` (default) or `stop` (disk kept, and charged). */
  onLifetimeEnd?: "destroy" | "stop";
  /** How long every GPU may stay below `idleThreshold` before the instance ends itself. */
  idleTimeout?: string;
  /** What an idle instance does: `stop` (default) or `destroy`. */
  idleAction?: "stop" | "destroy";
  /** GPU utilisation (percent) below which a GPU counts as idle. Default 10. */
  idleThreshold?: number;
}

const DURATION = /^(?:\d+[smhd])+$/;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** A duration of the policy in seconds: `"90s"`, `"15m"`, `"6h"`, `"2d"`, or a sum (`"1h30m"`). */
export function durationSeconds(text: string, what = "duration"): number {
  const trimmed = text.trim();
  if (!DURATION.test(trimmed)) {
    throw new ConfigurationError(`${what} ${JSON.stringify(text)} is not a duration: write a number and a unit, s, m, h or d ("90s", "15m", "6h", "2d", "1h30m").`);
  }
  const seconds = [...trimmed.matchAll(/(\d+)([smhd])/g)].reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_SECONDS[unit], 0);
  if (seconds <= 0) throw new ConfigurationError(`${what} ${JSON.stringify(text)} is zero: give a positive duration.`);
  return seconds;
}

/** The policy's fields as the Instance resource declares them (zod, checked at preview). */
export const LifetimeFields = {
  maxLifetime: z.string().optional(),
  onLifetimeEnd: z.enum(["destroy", "stop"]).optional(),
  idleTimeout: z.string().optional(),
  idleAction: z.enum(["stop", "destroy"]).optional(),
  idleThreshold: z.number().min(0).max(100).optional(),
};
export const LIFETIME_KEYS = ["maxLifetime", "onLifetimeEnd", "idleTimeout", "idleAction", "idleThreshold"] as const;

/** Whether the policy asks for a watchdog at all. */
export function guards(policy: LifetimePolicy | undefined): policy is LifetimePolicy {
  return !!policy && (policy.maxLifetime !== undefined || policy.idleTimeout !== undefined);
}

/**
 * What is wrong with a policy for an instance of this runtype, or undefined. Runtype `args` runs no onstart (its
 * command replaces the image's entrypoint), so nothing on the instance could end it: refused, not ignored.
 */
export function lifetimeProblem(policy: LifetimePolicy | undefined, runtype: Runtype | undefined): string | undefined {
  if (!guards(policy)) return undefined;
  try {
    if (policy.maxLifetime !== undefined) durationSeconds(policy.maxLifetime, "maxLifetime");
    if (policy.idleTimeout !== undefined) durationSeconds(policy.idleTimeout, "idleTimeout");
  } catch (error) {
    return (error as Error).message;
  }
  if (runtype === "args") {
    return "maxLifetime and idleTimeout need an SSH or Jupyter runtype: the watchdog that ends the instance starts from onstart, " +
      "and runtype args runs no onstart. Use runtype ssh_direct (or ssh, jupyter...) and start your command from onstart, or drop maxLifetime/idleTimeout.";
  }
  return undefined;
}

/** The emulator's answer to `GET /_emulator/machines` (the live service has no such call: its machines run onstart). */
const MachinesAnswer = z.object({ onstart: z.boolean(), why: z.string().optional() });

/**
 * Why no watchdog can run on this service's instances, or undefined when one can (or when that cannot be known):
 * only an emulator without its machines (`--no-ssh`, or a computer where they cannot run) runs no onstart, and says
 * so in its control API. Any other answer (the live service's 404, a control API turned off) counts as "it runs".
 */
export async function watchdogCannotRun(client: Caller & { apiUrl: string }): Promise<string | undefined> {
  try {
    const answer = await client.call({ method: "GET", path: "/_emulator/machines", schema: MachinesAnswer });
    return answer.onstart ? undefined : `the emulator at ${client.apiUrl} runs no onstart (${answer.why ?? "it has no machines"})`;
  } catch {
    return undefined;
  }
}

/** `pulumi preview`'s warning for a policy that no watchdog will hold on this service (see watchdogCannotRun). */
export async function lifetimeWarnings(client: Caller & { apiUrl: string }, policy: LifetimePolicy | undefined): Promise<string[]> {
  if (!guards(policy)) return [];
  const why = await watchdogCannotRun(client);
  if (!why) return [];
  return [
    `${describePolicy(policy)}: not enforced, because ${why}; no watchdog will end the instance, and lifetimeInEffect will be empty. ` +
      "Start the emulator with its machines (without --no-ssh, on Linux), or end the instance yourself (pulumi destroy).",
  ];
}

/** The log of the watchdog on the instance (the user's onstart output stays where it was). */
export const WATCHDOG_LOG = "${HOME:-/root}/.gpu-rental-watchdog.log";
const MARK = "# gpu-rental watchdog";

/**
 * The creation request with the watchdog composed into `onstart`: the watchdog starts in the background, its
 * output to its own log, then the user's onstart follows exactly as written (same shell, same output). Throws a
 * ConfigurationError for a policy the runtype cannot hold (see lifetimeProblem).
 */
export function withWatchdog(request: CreateInstanceRequest, policy: LifetimePolicy | undefined, apiUrl: string): CreateInstanceRequest {
  if (!guards(policy)) return request;
  // Without a runtype the service runs `args`, unless a template gives one (checked where it is known).
  const problem = lifetimeProblem(policy, request.runtype ?? (request.template_hash_id ? undefined : "args"));
  if (problem) throw new ConfigurationError(problem);
  const script = watchdogScript(policy, apiUrl);
  const onstart = `${MARK} (${describePolicy(policy)}): ends this instance with its own CONTAINER_API_KEY\n` +
    `( ${script} ) </dev/null >>${WATCHDOG_LOG} 2>&1 &\n${MARK} end\n${request.onstart ?? ""}`;
  return { ...request, onstart };
}

/** The user's own onstart from a composed one (what `withWatchdog` was given). */
export function userOnstart(onstart: string | undefined): string | undefined {
  if (!onstart?.startsWith(MARK)) return onstart;
  const end = onstart.indexOf(`\n${MARK} end\n`);
  if (end < 0) return onstart;
  const rest = onstart.slice(end + `\n${MARK} end\n`.length);
  return rest === "" ? undefined : rest;
}

export function describePolicy(policy: LifetimePolicy): string {
  const parts: string[] = [];
  if (policy.maxLifetime) parts.push(`maxLifetime ${policy.maxLifetime}, then ${policy.onLifetimeEnd ?? "destroy"}`);
  if (policy.idleTimeout) parts.push(`idle below ${policy.idleThreshold ?? 10} % for ${policy.idleTimeout}, then ${policy.idleAction ?? "stop"}`);
  return parts.join("; ");
}

/** Seconds between two idle checks: a fifth of the timeout, between 1 s and 60 s. */
export function idleCheckSeconds(idleTimeoutSeconds: number): number {
  return Math.min(60, Math.max(1, Math.floor(idleTimeoutSeconds / 5)));
}

/**
 * The watchdog, POSIX sh on one line per statement. It needs curl, wget or python3 on the image to call the
 * service; without any of them it says so in its log. A call that fails is tried again (the instance must not be
 * left running because the service hiccuped), a bounded number of times (docs/spend-guard.md).
 */
function watchdogScript(policy: LifetimePolicy, apiUrl: string): string {
  const life = policy.maxLifetime ? durationSeconds(policy.maxLifetime) : 0;
  const idle = policy.idleTimeout ? durationSeconds(policy.idleTimeout) : 0;
  const every = idle ? idleCheckSeconds(idle) : 60;
  const url = `${apiUrl.replace(/\/+$/, "")}/api/v0/instances/`;
  const lines = [
    `life=${life}; life_action=${policy.onLifetimeEnd ?? "destroy"}; idle=${idle}; idle_action=${policy.idleAction ?? "stop"}`,
    `threshold=${policy.idleThreshold ?? 10}; every=${every}; url=${shellQuote(url)}"$CONTAINER_ID/"`,
    `start=$(date +%s); idle_since=$start`,
    selfEnd,
    `echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) watchdog of instance $CONTAINER_ID: ${describePolicy(policy)}"`,
    `while :; do now=$(date +%s)`,
    `  if [ $life -gt 0 ] && [ $((now - start)) -ge $life ]; then end_it $life_action "maxLifetime reached"; fi`,
    `  if [ $idle -gt 0 ]; then busy=$(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits 2>/dev/null | awk -F, -v t=$threshold 'NF { seen=1; if ($1+0 >= t) b=1 } END { print (seen ? b+0 : 1) }');` +
      ` if [ "$busy" = 1 ]; then idle_since=$now; elif [ $((now - idle_since)) -ge $idle ]; then end_it $idle_action "GPUs idle below $threshold % for $idle s"; fi; fi`,
    `  nap=$every; if [ $life -gt 0 ]; then left=$((start + life - now)); [ $left -lt $nap ] && nap=$left; [ $nap -lt 1 ] && nap=1; fi; sleep $nap`,
    `done`,
  ];
  return lines.join("\n");
}

/**
 * POSIX sh functions that end the instance they run on with its own key (`CONTAINER_API_KEY`; `$url` the instance's
 * URL in the API): `call stop|destroy` prints the answer's status, through curl, python3 or wget, whichever the image
 * has; `end_it stop|destroy WHY` logs why and calls until the service takes it (a hiccup must not leave the instance
 * billing), then exits. The watchdog and the job wrapper (./job-wrapper.ts) end their instance with them.
 */
export const selfEnd =
    `call() { if [ "$1" = stop ]; then m=PUT; b='{"state":"stopped"}'; else m=DELETE; b=''; fi;` +
      ` if command -v curl >/dev/null; then curl -sS -o /dev/null -w '%{http_code}' -X $m -H "Authorization: Bearer $CONTAINER_API_KEY" -H 'Content-Type: application/json' \${b:+-d "$b"} "$url";` +
      ` elif command -v python3 >/dev/null; then python3 -c 'import sys,os,urllib.request as u; r=u.Request(sys.argv[1], data=(sys.argv[3].encode() or None), method=sys.argv[2], headers={"Authorization":"Bearer "+os.environ["CONTAINER_API_KEY"],"Content-Type":"application/json"}); print(u.urlopen(r, timeout=30).status)' "$url" $m "$b";` +
      ` elif command -v wget >/dev/null; then wget -q -O /dev/null --method=$m \${b:+--body-data="$b"} --header="Authorization: Bearer $CONTAINER_API_KEY" --header='Content-Type: application/json' "$url" && echo 200;` +
      ` else echo "no curl, python3 or wget on this image: cannot call the service" >&2; fi; }\n` +
    `end_it() { echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $2: $1"; n=0; while [ $n -lt 20 ]; do code=$(call "$1"); case "$code" in 2*) echo "done ($code)"; exit 0;; esac; n=$((n+1)); echo "answer $code, again in $((n*5)) s"; sleep $((n*5)); done; exit 1; }`;

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
