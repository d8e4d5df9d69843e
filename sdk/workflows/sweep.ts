import type { GpuRentalClient } from "../client";
import { ConfigurationError, deletedOrGone } from "../errors";
import { checkPrefix, hasPrefix, tokenOfApiKey, tokenOfInstance, tokenOfVolume } from "./tokens";
import { ownerOf, StackHoldings } from "./stack-holdings";
import type { Instance } from "../schemas";
import { spendReport } from "./spend";
import { destroyRetried } from "./destroy";
import { durationSeconds } from "./watchdog";

export interface SweepOptions {
  /** Everything whose creation token has this prefix (the `tokenPrefix` a run created with). */
  tokenPrefix?: string;
  /** Everything carrying one of these tokens (an OutcomeUnknownError names its token). */
  tokens?: string[];
  /** Instances with this label. */
  label?: string;
  /**
   * What carries this stack's creation tokens and its state does not hold (stackHoldings): the orphans of runs
   * that were cut off. Its own objects are never touched.
   */
  stack?: StackHoldings;
  /** Only list what would be destroyed. */
  dryRun?: boolean;
  /** Only instances older than this (`"6h"`), by the service's clock; volumes and keys are then left alone. */
  olderThan?: string;
  /**
   * Only stopped instances that have been stopped this long (`"2d"`); volumes and keys are then left alone. The
   * time stopped is read from the billing (time since creation less the hours of compute charged), so it needs a
   * key that may read billing; for an instance stopped more than once it is the sum of its stopped periods.
   */
  idle?: string;
}

export interface SweepReport {
  dryRun: boolean;
  instances: { id: number; token?: string; label?: string | null }[];
  volumes: { id: number; name?: string | null }[];
  apiKeys: { id: number; name?: string | null }[];
}

/**
 * Finds, and unless `dryRun` destroys, what earlier runs left behind: the instances, network volumes and API keys
 * whose creation tokens match (or instances with the label). Instances go first, so volumes they held are free
 * to delete. Things already gone count as destroyed.
 */
export async function sweep(client: GpuRentalClient, options: SweepOptions): Promise<SweepReport> {
  if (!options.tokenPrefix && !options.tokens?.length && !options.label && !options.stack) {
    throw new ConfigurationError("sweep needs a tokenPrefix, tokens, a label or a stack: it never sweeps everything of an account.");
  }
  if (options.tokenPrefix) checkPrefix(options.tokenPrefix);
  const byToken = (token: string | undefined) =>
    !!token && ((!!options.tokenPrefix && hasPrefix(token, options.tokenPrefix)) || !!options.tokens?.includes(token));
  // Of a kind whose held ids `held` names: picked by token, or an orphan of the stack.
  const selected = (held: (stack: StackHoldings) => number[]) => (token: string | undefined, id: number) =>
    byToken(token) || (!!options.stack && ownerOf(token, id, [options.stack], held).ownership === "orphan");

  // Everything is listed before anything is destroyed: a listing that fails (a ListingError) stops the sweep
  // with nothing destroyed. By label alone the service narrows the listing; tokens sit in `extra_env`, which the
  // listing cannot filter on, so a sweep by token reads every page.
  const byLabelOnly = !!options.label && !options.tokenPrefix && !options.tokens?.length && !options.stack;
  const listed = await client.instances.list(byLabelOnly ? { filters: { label: { eq: options.label! } } } : {});
  const picked = listed.filter((i) => selected((s) => s.instances)(tokenOfInstance(i), i.id) || (!!options.label && i.label === options.label));
  const aged = options.olderThan !== undefined || options.idle !== undefined;
  const instances = aged ? await forgotten(client, picked, options) : picked;
  const volumes = aged ? [] : (await client.volumes.list("all_volume")).filter((v) => selected((s) => s.volumes)(tokenOfVolume(v), v.id));
  const apiKeys = aged ? [] : (await client.apiKeys.list()).filter((k) => selected((s) => s.apiKeys)(tokenOfApiKey(k), k.id));
  const report: SweepReport = {
    dryRun: !!options.dryRun,
    instances: instances.map((i) => ({ id: i.id, token: tokenOfInstance(i), label: i.label })),
    volumes: volumes.map((v) => ({ id: v.id, name: v.name })),
    apiKeys: apiKeys.map((k) => ({ id: k.id, name: k.name })),
  };
  if (options.dryRun) return report;
  await destroyRetried(client, report.instances.map((i) => i.id));
  for (const { id } of report.volumes) await deletedOrGone(() => client.volumes.delete(id));
  for (const { id } of report.apiKeys) await deletedOrGone(() => client.apiKeys.delete(id));
  return report;
}

/** The instances among `picked` that are older than `olderThan` and, with `idle`, stopped at least that long. */
async function forgotten(client: GpuRentalClient, picked: Instance[], options: SweepOptions): Promise<Instance[]> {
  const idle = options.idle === undefined ? undefined : durationSeconds(options.idle, "--idle");
  const lines = new Map((await spendReport(client, { olderThan: options.olderThan, liveOnly: true })).instances.map((line) => [line.id, line]));
  return picked.filter((instance) => {
    const line = lines.get(instance.id);
    if (!line) return false;
    return idle === undefined || (line.state === "stopped" && (line.stoppedSeconds ?? 0) >= idle);
  });
}
