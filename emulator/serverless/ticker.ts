import { connect } from "node:net";
import { Marketplace } from "../domain/marketplace";
import type { OnstartReport } from "../sandbox/machines";

/** How often the autoscaler looks at its endpoints, real ms (and at every move of the emulator's clock). */
const TICK_MS = 250;

/**
 * Runs the autoscaler while the emulator serves: a look at every endpoint each tick and whenever the clock is
 * moved, and, with the emulated machines, a probe of each loading worker's model server (its published port
 * accepting a connection), which makes it ready. `onstartOf` reads a machine's start command (its exit and
 * output): a worker whose start command ended while nothing serves is said in its endpoint's log, once.
 */
export function startAutoscaling(market: Marketplace, onstartOf: (instanceId: number) => OnstartReport | undefined = () => undefined): () => void {
  let probing = false;
  const failedStarts = new Set<number>();
  const tick = () => {
    if (!market.serverless.allEndpoints().length) return;
    let acted: boolean;
    try {
      acted = market.settle();
    } catch (error) {
      // A look that fails (a rule the domain missed) is logged, never the end of the emulator.
      console.error(`gpu-rental emulator: the autoscaler's look failed: ${(error as Error).stack ?? error}`);
      return;
    }
    if (market.workersServe && !probing) {
      probing = true;
      void probeLoading(market, onstartOf, failedStarts).finally(() => (probing = false));
    }
    // With a data dir, what the autoscaler did is saved (a look that changed no worker writes nothing).
    if (acted) void market.commit().catch(() => undefined);
  };
  const timer = setInterval(tick, TICK_MS);
  timer.unref();
  const unfollow = market.clock.onMove(tick);
  return () => {
    clearInterval(timer);
    unfollow();
  };
}

/** Workers whose instance runs but whose model server has not answered yet: those that now accept a connection are loaded. */
async function probeLoading(market: Marketplace, onstartOf: (instanceId: number) => OnstartReport | undefined, failedStarts: Set<number>): Promise<void> {
  const loading = market.serverless
    .allEndpoints()
    .flatMap((e) => market.serverless.workersOf({ endpointId: e.id }))
    .filter((w) => w.loadedAt === undefined && market.autoscaler.stateOf(w) === "loading" && isRunning(market, w.instanceId))
    // A deployment's worker is ready once it reports its load time, not when its port answers (emulator/DEPLOYMENTS.md).
    .filter((w) => market.serverless.groupById(w.groupId)?.deploymentId === undefined);
  await Promise.all(
    loading.map(async (worker) => {
      if (await accepts(market.workerUrl(worker))) return market.autoscaler.loaded(worker.instanceId);
      // Its start command is over and nothing serves: nothing will, until the worker is replaced. Said once.
      const onstart = onstartOf(worker.instanceId);
      if (!onstart || onstart.state === "running" || failedStarts.has(worker.instanceId)) return;
      failedStarts.add(worker.instanceId);
      market.serverlessLogs.add(worker.endpointId, worker.groupId, market.clock.now(), startFailure(worker.instanceId, onstart));
    }),
  );
}

/** Lines of a start command's output a log line quotes: its last ones, where the error is. */
const QUOTED_LINES = 5;

/** The log line of a worker whose start command ended with nothing serving: its exit and its output's last lines. */
function startFailure(instanceId: number, onstart: OnstartReport): string {
  const ended = onstart.signal ? `was killed (${onstart.signal})` : onstart.timed_out ? "ran out of time" : `exited ${onstart.exit_code}`;
  const tail = onstart.output.trimEnd().split("\n").slice(-QUOTED_LINES).join(" | ");
  return `worker ${instanceId} will not be ready: its start command (onstart) ${ended} and nothing answers on its port; its output ends: ${tail || "(nothing)"}`;
}

function isRunning(market: Marketplace, instanceId: number): boolean {
  const instance = market.instances.byId(instanceId);
  return !!instance && instance.intended === "running" && instance.bootPending === undefined && !instance.failure;
}

/**
 * Whether a server answers at the URL: a request is sent and any byte back is an answer. (A published port is the
 * emulator's own relay, which takes the connection whether or not the server inside listens: a connection alone
 * proves nothing; the relay closes it without a byte when nothing does.)
 */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  if (!port) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("connect", () => socket.write(`GET / HTTP/1.0\r\nHost: ${hostname}\r\n\r\n`));
    socket.once("data", () => done(true));
    socket.once("close", () => done(false));
    socket.once("error", () => done(false));
  });
}
