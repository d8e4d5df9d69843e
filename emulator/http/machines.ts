import { FastifyInstance } from "fastify";
import { notFound } from "../domain/errors";
import { Machines } from "../sandbox/machines";
import { Marketplace } from "../domain/marketplace";
import { idParam } from "./routes";

/**
 * The control API's view of an instance's emulated machine (with `--ssh`): its sandbox folder and what its
 * `onstart` printed, for tests and developers. Not part of the service, so under `/_emulator/`.
 */
export function registerMachineControl(app: FastifyInstance, market: Marketplace, machines: Machines): void {
  app.get("/_emulator/instances/:id/machine", async (request) => {
    const id = idParam(request.params as Record<string, string>, "id");
    const instance = market.instances.all().find((i) => i.id === id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    market.instances.settle();
    return { instance_id: id, up: machines.isUp(instance), sandbox: machines.sandboxOf(id) ?? null, onstart: machines.onstartOf(id) ?? null };
  });
}
