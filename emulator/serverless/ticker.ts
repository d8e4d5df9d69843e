import { connect } from "node:net";
import { Marketplace } from "../domain/marketplace";

/** How often the autoscaler looks at its endpoints, real ms (and at every move of the emulator's clock). */
const TICK_MS = 250;

/**
 * Runs the autoscaler while the emulator serves: a look at every endpoint each tick and whenever the clock is
 * moved, and, with the emulated machines, a probe of each loading worker's model server (its published port
 * accepting a connection), which makes it ready.
 */
export function startAutoscaling(market: Marketplace): () => void {
  let probing = false;
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
      void probeLoading(market).finally(() => (probing = false));
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
async function probeLoading(market: Marketplace): Promise<void> {
  const loading = market.serverless
    .allEndpoints()
    .flatMap((e) => market.serverless.workersOf({ endpointId: e.id }))
    .filter((w) => w.loadedAt === undefined && market.autoscaler.stateOf(w) === "loading" && isRunning(market, w.instanceId))
    // A deployment's worker is ready once it reports its load time, not when its port answers (emulator/DEPLOYMENTS.md).
    .filter((w) => market.serverless.groupById(w.groupId)?.deploymentId === undefined);
  await Promise.all(
    loading.map(async (worker) => {
      if (await accepts(market.workerUrl(worker))) market.autoscaler.loaded(worker.instanceId);
    }),
  );
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
