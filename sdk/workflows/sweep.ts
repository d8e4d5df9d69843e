import type { GpuRentalClient } from "../client";
import { ConfigurationError } from "../errors";
import { deletedOrGone } from "../resources/spec";
import { checkPrefix, hasPrefix, tokenOfApiKey, tokenOfInstance, tokenOfVolume } from "./tokens";

export interface SweepOptions {
  /** Everything whose creation token has this prefix (the `tokenPrefix` a run created with). */
  tokenPrefix?: string;
  /** Everything carrying one of these tokens (an OutcomeUnknownError names its token). */
  tokens?: string[];
  /** Instances with this label. */
  label?: string;
  /** Only list what would be destroyed. */
  dryRun?: boolean;
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
  if (!options.tokenPrefix && !options.tokens?.length && !options.label) {
    throw new ConfigurationError("sweep needs a tokenPrefix, tokens or a label: it never sweeps everything of an account.");
  }
  if (options.tokenPrefix) checkPrefix(options.tokenPrefix);
  const matches = (token: string | undefined) =>
    !!token && ((!!options.tokenPrefix && hasPrefix(token, options.tokenPrefix)) || !!options.tokens?.includes(token));

  // Everything is listed before anything is destroyed: a listing that fails (a ListingError) stops the sweep
  // with nothing destroyed. By label alone the service narrows the listing; tokens sit in `extra_env`, which the
  // listing cannot filter on, so a sweep by token reads every page.
  const byLabelOnly = !!options.label && !options.tokenPrefix && !options.tokens?.length;
  const listed = await client.instances.list(byLabelOnly ? { filters: { label: { eq: options.label! } } } : {});
  const instances = listed.filter((i) => matches(tokenOfInstance(i)) || (!!options.label && i.label === options.label));
  const volumes = (await client.volumes.list("all_volume")).filter((v) => matches(tokenOfVolume(v)));
  const apiKeys = (await client.apiKeys.list()).filter((k) => matches(tokenOfApiKey(k)));
  const report: SweepReport = {
    dryRun: !!options.dryRun,
    instances: instances.map((i) => ({ id: i.id, token: tokenOfInstance(i), label: i.label })),
    volumes: volumes.map((v) => ({ id: v.id, name: v.name })),
    apiKeys: apiKeys.map((k) => ({ id: k.id, name: k.name })),
  };
  if (options.dryRun) return report;
  for (const { id } of report.instances) await deletedOrGone(() => client.instances.destroy(id));
  for (const { id } of report.volumes) await deletedOrGone(() => client.volumes.delete(id));
  for (const { id } of report.apiKeys) await deletedOrGone(() => client.apiKeys.delete(id));
  return report;
}
