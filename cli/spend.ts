import { Connection, GpuRentalClient, SpendLine, spendReport, SpendFilter, SpendReport } from "../sdk";
import { readStackHoldings } from "./stack-holdings";

/**
 * `gpu-rental spend`: every instance of the account (GPU_RENTAL_API_URL / GPU_RENTAL_API_KEY, a key that may read
 * billing) with what it costs per hour now and has cost so far, and whose it is (held by one of `stacks`' states,
 * an orphan of one, made by gpu-rental otherwise, or not), as a table or JSON.
 */
export async function runSpend(filter: SpendFilter, json: boolean, account: Connection, stacks: string[] = []): Promise<SpendReport> {
  const report = await spendReport(new GpuRentalClient(account), filter, stacks.map((stack) => readStackHoldings(stack)));
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return report;
  }
  const header = ["ID", "LABEL", "TOKEN", "OWNER", "STATE", "AGE", "$/HOUR", "ACCRUED $"];
  const rows = report.instances.map((line) => [
    String(line.id), line.label || "-", line.token ?? "-", owner(line),
    line.endedAt ? `ended ${new Date(line.endedAt * 1000).toISOString().slice(0, 19)}Z` : line.state,
    age(line.ageSeconds), dollars(line.pricePerHour), dollars(line.accrued),
  ]);
  rows.push(["TOTAL", "", "", "", `${report.instances.filter((l) => !l.endedAt).length} live`, "", dollars(report.totalPerHour), dollars(report.totalAccrued)]);
  const widths = header.map((_, col) => Math.max(...[header, ...rows].map((row) => row[col].length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, col) => (col >= 6 ? cell.padStart(widths[col]) : cell.padEnd(widths[col]))).join("  ").trimEnd());
  return report;
}

/**
 * An amount in dollars to the hundredth of a cent, rates and costs alike: an instance that ran a minute has cost
 * a fraction of a cent, which two decimals would show as nothing.
 */
function dollars(amount: number): string {
  return amount.toFixed(4);
}

/** Whose an instance is, in a word or two: `state of proj/dev`, `orphan of proj/dev`, `gpu-rental`, `not gpu-rental`. */
function owner(line: SpendLine): string {
  switch (line.ownership) {
    case "held":
      return `state of ${line.stack}`;
    case "orphan":
      return `orphan of ${line.stack}`;
    case "gpu-rental":
      return "gpu-rental";
    case "other":
      return "not gpu-rental";
    default:
      return "-";
  }
}

/** `3d4h`, `5h12m`, `42m`, `17s`: the two largest units. */
function age(seconds: number): string {
  const units: [string, number][] = [["d", 86_400], ["h", 3600], ["m", 60], ["s", 1]];
  const parts: string[] = [];
  let left = Math.floor(seconds);
  for (const [unit, size] of units) {
    if (left >= size || (unit === "s" && parts.length === 0)) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join("");
}
