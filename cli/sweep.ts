import { Connection, GpuRentalClient, sweep, SweepOptions, SweepReport } from "../sdk";
import { readStackHoldings } from "./stack-holdings";

/**
 * `gpu-rental sweep`: finds (and unless --dry-run destroys) what crashed runs left behind, by creation token
 * prefix, token, instance label, or as the orphans of a Pulumi stack (`stack`: what carries its tokens and its
 * state does not hold), with the account of GPU_RENTAL_API_URL / GPU_RENTAL_API_KEY. The key is read from the
 * environment only, never from the command line (where other users of the machine see it).
 */
export async function runSweep(options: Omit<SweepOptions, "stack"> & { stack?: string }, account: Connection): Promise<SweepReport> {
  const client = new GpuRentalClient(account);
  const report = await sweep(client, { ...options, stack: options.stack === undefined ? undefined : readStackHoldings(options.stack) });
  const verb = report.dryRun ? "would destroy" : "destroyed";
  const lines = [
    ...report.instances.map((i) => `instance ${i.id}${i.token ? ` (token ${i.token})` : ""}${i.label ? ` label ${JSON.stringify(i.label)}` : ""}`),
    ...report.volumes.map((v) => `volume ${v.id} ${JSON.stringify(v.name ?? "")}`),
    ...report.apiKeys.map((k) => `API key ${k.id} ${JSON.stringify(k.name ?? "")}`),
  ];
  for (const line of lines) console.log(`${verb}: ${line}`);
  console.log(lines.length ? `sweep: ${verb} ${lines.length} object(s)${report.dryRun ? " (dry run: nothing was changed)" : ""}` : "sweep: nothing found");
  return report;
}
