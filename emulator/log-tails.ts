import { logSelection } from "./domain/commands";
import { actualStatus } from "./domain/instances";
import type { Marketplace } from "./domain/marketplace";
import type { InstanceRecord } from "./domain/records";

/** The lines of each instance's logs a failure report shows. */
export const TAIL_LINES = 20;

/**
 * What a failure's report shows of the instances it concerns (`gpu-rental test`, the main job): for each instance
 * of `userIds` that the failure's text names (`instance 4000001`), or else that failed (exited, unknown, offline)
 * or whose onstart ended in an error, the last lines of its logs (its container's output, then the service's
 * lines about it). Empty when no instance is concerned.
 */
export function instanceLogTails(market: Marketplace, userIds: number[], failure: string, lines = TAIL_LINES): string {
  const owned = userIds.flatMap((id) => market.instances.list(id));
  const named = new Set([...failure.matchAll(/\binstances?\s+(\d+)/gi)].map((m) => Number(m[1])));
  const now = market.clock.now();
  const failed = (instance: InstanceRecord) => ["exited", "unknown", "offline"].includes(actualStatus(instance, now, market.lifecycle) ?? "") && instance.intended === "running";
  const concerned = owned.filter((i) => named.has(i.id)).length ? owned.filter((i) => named.has(i.id)) : owned.filter(failed);
  return concerned
    .map((instance) => {
      const container = logSelection(market.machineWork?.logOf(instance, "container") ?? "", { tail: lines });
      const daemon = logSelection(market.instanceWork.daemonLog(instance), { tail: 5 });
      const status = actualStatus(instance, now, market.lifecycle) ?? "unknown";
      const text = (container + daemon).trimEnd() || "(no output)";
      return `\nlogs of instance ${instance.id} (${status}${instance.statusMsg ? `: ${instance.statusMsg}` : ""}), the last ${lines} lines:\n  ${text.replace(/\n/g, "\n  ")}`;
    })
    .join("");
}
