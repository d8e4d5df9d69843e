/**
 * Log lines kept by key (an endpoint's, a worker group's), the last MAX_LINES of each, as the autoscaler host's
 * log calls show them. Not saved: a restarted emulator starts its logs afresh.
 */
const MAX_LINES = 1000;

export class LogBook {
  private readonly lines = new Map<string, string[]>();

  /** A line of an endpoint, and of its worker group when it concerns one. */
  add(endpointId: number, groupId: number | undefined, at: number, text: string): void {
    const line = `${new Date(at).toISOString()} ${text}`;
    this.push(`endpoint ${endpointId}`, line);
    if (groupId !== undefined) this.push(`group ${groupId}`, line);
  }

  /** The last `tail` lines (all kept without it) as one text. */
  text(of: { endpointId?: number; groupId?: number }, tail?: number): string {
    const key = of.endpointId !== undefined ? `endpoint ${of.endpointId}` : `group ${of.groupId}`;
    const lines = this.lines.get(key) ?? [];
    return (tail === undefined ? lines : lines.slice(-tail || lines.length)).join("\n");
  }

  private push(key: string, line: string): void {
    const lines = this.lines.get(key) ?? [];
    // A line said again (no offer, at every look) is kept once: the log shows what changed.
    if (lines.length && lines[lines.length - 1].slice(25) === line.slice(25)) return;
    lines.push(line);
    if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
    this.lines.set(key, lines);
  }
}
