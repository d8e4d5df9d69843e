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
    const acted = market.settle();
    if (market.workersServe && !probing) {
      probing = true;
      void probeLoading(market).finally(() => (probing = false));
    }
    // With a data dir, what the autoscaler did is saved (a look that did nothing writes nothing).
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
    .filter((w) => w.loadedAt === undefined && market.autoscaler.stateOf(w) === "loading" && isRunning(market, w.instanceId));
  await Promise.all(
    loading.map(async (worker) => {
      if (await accepts(market.workerUrl(worker))) market.autoscaler.loaded(worker.instanceId);
    }),
  );
}

function isRunning(market: Marketplace, instanceId: number): boolean {
  const instance = market.instances.all().find((i) => i.id === instanceId);
  return !!instance && instance.intended === "running" && instance.bootPending === undefined && !instance.failure;
}

/** Whether something listens at the URL's host and port. */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  if (!port) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
