/**
 * A shared state backend (Pulumi Cloud, S3, PostgreSQL: the stacks of a team's runners) refuses a run in two ways
 * that a CI log should say plainly, in one line with what to do: another run holds the stack's lock, or the
 * backend cannot be reached. Both come before the engine runs the program, so nothing was rented.
 */

/** The engine's words for a stack another run has locked (a self-managed backend's lock file). */
const LOCKED = /the stack is currently locked by (\d+) lock\(s\)[\s\S]*?created by (\S+) \(pid (\d+)\) at (\S+)/;
/** ...and for a backend it cannot open: the URL (its password masked by the engine or by us), and why. */
const UNOPENED = /unable to open bucket (\S+?):\s+(.+)/;
/** PostgreSQL's answer to a URL asking for SSL (`sslmode=require`, `verify-ca`, `verify-full`) from a server without it. */
const SSL_REFUSED = /SSL is not enabled on the server/;
/** The reasons that mean the server was not reached at all (Go's net errors, PostgreSQL's refusals of a login). */
const NOT_REACHED = /(dial \S+ \S+: .+|lookup \S+.*|i\/o timeout|connection refused|no such host|password authentication failed.*|database "[^"]*" does not exist)$/;

/**
 * What went wrong with the stack's backend, in one line saying what to do, when Pulumi's output says one of
 * the two refusals above; undefined otherwise.
 */
export function backendRefusal(output: string, stack: string): string | undefined {
  const locked = LOCKED.exec(output);
  if (locked) {
    const [, , owner, pid, since] = locked;
    return (
      `stack ${stack} is being updated by another run (${owner}, pid ${pid}, since ${since}), so the backend refused this one and nothing was changed: ` +
      `wait for that run to end (a concurrency group per stack in the workflow queues them), or, if it was killed, release its lock with ` +
      `\`pulumi cancel --yes --stack ${stack}\` and run again (the next up takes over what it had rented).`
    );
  }
  const unopened = UNOPENED.exec(output);
  if (!unopened) return undefined;
  const [, url, why] = unopened;
  const reason = why.trim();
  if (SSL_REFUSED.test(reason)) {
    return (
      `the state backend ${masked(url)} refused the connection's SSL (${reason}), so nothing was deployed: its URL asks for SSL ` +
      `(sslmode=${sslModeOf(url) ?? "require"}), which this server does not offer: use sslmode=disable for a server on this machine or a private ` +
      `network (a local or a test's server), or turn SSL on in the server (ssl = on in postgresql.conf, with a certificate) and keep sslmode=require.`
    );
  }
  const notReached = NOT_REACHED.exec(reason);
  if (notReached) {
    return (
      `the state backend ${masked(url)} cannot be reached (${notReached[1]}), so nothing was deployed: ` +
      `check the URL (postgres://USER@HOST:PORT/DATABASE?sslmode=..., s3://BUCKET, file://FOLDER) and that the server is up and reachable from this runner.`
    );
  }
  return (
    `the state backend ${masked(url)} could not be opened (${reason}), so nothing was deployed: ` +
    `run again; a new PostgreSQL database is set up by its first user, so open it once (any pulumi stack command) before runners start at once (docs/team.md).`
  );
}

/** The `sslmode` a PostgreSQL URL asks for, if it names one. */
function sslModeOf(url: string): string | undefined {
  return /[?&]sslmode=([\w-]+)/.exec(url)?.[1];
}

/** A backend URL with its password masked, for messages and logs. */
export function masked(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "****";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@/]+@/, "//$1:****@");
  }
}
