import { FastifyInstance } from "fastify";
import { z } from "zod";
import { badRequest, notFound } from "../domain/errors";
import { Machines } from "../sandbox/machines";
import { Marketplace } from "../domain/marketplace";
import { idParam, parse } from "../http/routes";

const GpuValues = z.union([z.number(), z.array(z.number())]);
/** What the instance's `nvidia-smi` reports: one value for every GPU, or one per GPU. */
const SetGpus = z.object({ utilization: GpuValues.optional(), memory_used_mib: GpuValues.optional() }).strict();

/** Whether the emulator's instances get machines: where not, their onstart never runs (nor a watchdog from it). */
export interface MachinesStatus {
  onstart: boolean;
  /** Why not. */
  why?: string;
  /**
   * With machines: whether each runs in a network of its own, where two instances' servers on one container port
   * do not collide (emulator/sandbox/network.ts); else they share this computer's, and `network_why` says why.
   */
  own_network?: boolean;
  network_why?: string;
  /** With machines: why none can boot here (their namespaces cannot be made, ./sandbox/isolation.ts); absent when they can. */
  isolation_why?: string;
  /** With machines: why they serve no SFTP (and scp) here; absent when they do. */
  sftp_why?: string;
}

/**
 * The control API's view of the emulated machines: whether there are any (`GET /_emulator/machines`, which the
 * provider asks before it reports a lifetime policy in effect), and with them an instance's home as this computer
 * reaches it while its machine runs (`sandbox`) and what its `onstart` printed, for tests and developers. Not part of
 * the service, so under `/_emulator/`.
 */
export function registerMachineControl(app: FastifyInstance, market: Marketplace, machines: Machines | undefined, status: MachinesStatus): void {
  app.get("/_emulator/machines", async () => status);
  if (machines) registerInstanceMachines(app, market, machines);
}

function registerInstanceMachines(app: FastifyInstance, market: Marketplace, machines: Machines): void {
  const instanceOf = (params: unknown) => {
    const id = idParam(params as Record<string, string>, "id");
    const instance = market.instances.byId(id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return instance;
  };
  const gpusView = (reading: { utilization: number[]; memoryUsedMiB: number[] } | undefined) =>
    reading ? { utilization: reading.utilization, memory_used_mib: reading.memoryUsedMiB } : null;

  app.get("/_emulator/instances/:id/machine", async (request) => {
    const instance = instanceOf(request.params);
    market.settle();
    const id = instance.id;
    return {
      instance_id: id, up: machines.isUp(instance), sandbox: machines.sandboxOf(id) ?? null, onstart: machines.onstartOf(id) ?? null,
      gpus: gpusView(machines.gpusOf(instance)),
      // What the machine's `sleep`s wait for (emulator time, seconds): a process waiting on the clock is listed here.
      sleeping_until: machines.clockWaitsOf(id).map((ms) => ms / 1000),
    };
  });

  // What the machine's nvidia-smi reports from now on (default: every GPU busy, 100 %).
  app.put("/_emulator/instances/:id/gpus", async (request) => {
    const instance = instanceOf(request.params);
    const body = parse(SetGpus, request.body, "request");
    try {
      return { success: true, gpus: gpusView(machines.setGpus(instance, { utilization: body.utilization, memoryUsedMiB: body.memory_used_mib })) };
    } catch (error) {
      if (error instanceof RangeError) throw badRequest("invalid_args", error.message);
      throw error;
    }
  });
}
