import type { JobSpec } from "./job-spec";
import { selfEnd, shellQuote } from "./watchdog";

/**
 * The wrapper a job's command runs under on its instance, started from onstart (so it runs again at each boot: a
 * start after an outbid, a reboot the watcher asks for). It writes the command's state where the watcher reads it
 * over SSH (`~/.gpu-rental-job/status`: `running <epoch s>`, then `exit <code> <epoch s>`; the output beside it),
 * and ends its own instance with the instance's own key (`CONTAINER_API_KEY`, which may stop or destroy that
 * instance only: docs/service-facts.md#the-instances-own-key-ends-it), so a job whose watcher is gone stops billing all the same:
 * - the command succeeded: the instance is destroyed at once;
 * - it failed: the wrapper waits `lingerSeconds` (the watcher reads the error and decides: again, or the end),
 *   then stops the instance (compute billing ends; its disk stays until the watcher, or `job cancel`, destroys it).
 * Every start and exit is also logged on the checkpoint volume (`.gpu-rental-job.log`), which outlives instances.
 */
export const JOB_DIR = "${HOME:-/root}/.gpu-rental-job";
export const JOB_STATUS = `${JOB_DIR}/status`;
export const JOB_OUTPUT = `${JOB_DIR}/output`;
const MARK = "# gpu-rental job";

/** The onstart of a job's instances. */
export function jobOnstart(spec: JobSpec, apiUrl: string, lingerSeconds: number): string {
  const url = `${apiUrl.replace(/\/+$/, "")}/api/v0/instances/`;
  const ckpt = spec.checkpoints.mountPath;
  const env = Object.entries(spec.env ?? {}).map(([name, value]) => `export ${name}=${shellQuote(value)}`);
  const script = [
    `dir="${JOB_DIR}"; mkdir -p "$dir"; url=${shellQuote(url)}"$CONTAINER_ID/"`,
    `export CHECKPOINT_DIR=${shellQuote(ckpt)}; ${env.join("; ")}`,
    selfEnd,
    `if [ ! -d "$CHECKPOINT_DIR" ]; then echo "exit 90 $(date +%s)" > "$dir/status"; echo "the checkpoint volume is not mounted at $CHECKPOINT_DIR" > "$dir/output"; sleep ${lingerSeconds}; end_it stop "no checkpoint volume"; fi`,
    `echo "running $(date +%s)" > "$dir/status.new" && mv "$dir/status.new" "$dir/status"`,
    `echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) start on instance $CONTAINER_ID" >> "$CHECKPOINT_DIR/.gpu-rental-job.log"`,
    `sh -c ${shellQuote(spec.command)} > "$dir/output" 2>&1 </dev/null; code=$?`,
    `echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) exit $code on instance $CONTAINER_ID" >> "$CHECKPOINT_DIR/.gpu-rental-job.log"`,
    `echo "exit $code $(date +%s)" > "$dir/status.new" && mv "$dir/status.new" "$dir/status"`,
    `if [ $code -eq 0 ]; then end_it destroy "the command finished"; fi`,
    `sleep ${lingerSeconds}; end_it stop "the command failed (exit $code) and no watcher took it up"`,
  ].join("\n");
  return `${MARK} ${spec.name}: runs the command, ends this instance with its own CONTAINER_API_KEY\n( ${script} ) </dev/null >>"${JOB_DIR}.log" 2>&1 &\n`;
}

/** What the watcher reads over SSH: the status line, then the output's last lines. */
export const READ_STATUS = `cat "${JOB_STATUS}" 2>/dev/null || echo none; echo ---; tail -n 20 "${JOB_OUTPUT}" 2>/dev/null`;

export type CommandState = { state: "none" } | { state: "running"; since: number } | { state: "exited"; code: number; at: number; tail: string };

/** Reads what READ_STATUS printed. */
export function parseStatus(text: string): CommandState {
  const [head, ...rest] = text.split("\n---\n");
  const [word, a, b] = head.trim().split(/\s+/);
  if (word === "running") return { state: "running", since: Number(a) };
  if (word === "exit") return { state: "exited", code: Number(a), at: Number(b), tail: rest.join("\n---\n").trimEnd() };
  return { state: "none" };
}
