import { FastifyInstance } from "fastify";
import { z } from "zod";
import { badRequest, notFound } from "../domain/errors";
import { instanceView } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { parse } from "./routes";
import { RATE_LIMITED } from "../domain/ratelimits";
import { Faults, FaultSpec } from "./faults";

/**
 * The emulator control API, under `/_emulator/` and never under `/api/v0/`: it is not part of the service,
 * it lets tests and developers look inside and turn the knobs. It needs no key; serve it on loopback only,
 * or switch it off (`--no-control`).
 */
export const ControlSettings = z
  .object({
    contention: z.number().min(0).max(1).optional(),
    lifecycle: z.object({ provisioningMs: z.number().min(0).optional(), loadingMs: z.number().min(0).optional() }).strict().optional(),
    rateLimits: z
      .partialRecord(z.enum(RATE_LIMITED), z.object({ limit: z.number().int().min(0), windowMs: z.number().int().positive() }).strict())
      .optional(),
  })
  .strict();

const NewUser = z.object({ email: z.email(), credit: z.number().optional() }).strict();
const Advance = z.object({ ms: z.number().min(0) }).strict();
const Fail = z.object({ status: z.enum(["exited", "unknown", "offline"]), msg: z.string().optional() }).strict();


export function registerControl(app: FastifyInstance, market: Marketplace, faults: Faults): void {
  app.get("/_emulator/state", async () => {
    market.instances.settle();
    const now = market.clock.now();
    return {
      now,
      contention: market.contention,
      rateLimits: market.rateLimits.settings,
      lifecycle: market.lifecycle,
      stats: { ...market.stats, faultsInjected: faults.injected },
      faults: faults.list(),
      offers_on_market: market.market.countOnMarket(),
      // The emulator process's memory, in MiB (the schemathesis suite reports it after its run).
      memory: Object.fromEntries(Object.entries(process.memoryUsage()).map(([name, bytes]) => [name, Math.round(bytes / 1024 / 102.4) / 10])),
      instances: market.instances.all().map((i) => ({ ...instanceView(i, now, market.lifecycle), owner_id: i.ownerId })),
    };
  });

  app.put("/_emulator/settings", async (request) => {
    const settings = parse(ControlSettings, request.body, "request");
    if (settings.contention !== undefined) market.contention = settings.contention;
    if (settings.lifecycle) market.lifecycle = { ...market.lifecycle, ...settings.lifecycle };
    if (settings.rateLimits) Object.assign(market.rateLimits.settings, settings.rateLimits);
    return { success: true, contention: market.contention, lifecycle: market.lifecycle, rateLimits: market.rateLimits.settings };
  });

  app.post("/_emulator/clock/advance", async (request) => {
    market.clock.advance(parse(Advance, request.body, "request").ms);
    return { success: true, now: market.clock.now() };
  });

  app.post("/_emulator/instances/:id/fail", async (request) => {
    const { status, msg } = parse(Fail, request.body, "request");
    const id = Number((request.params as { id: string }).id);
    if (!market.instances.fail(id, status, msg)) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return { success: true };
  });

  // Another client outbids an interruptible instance: it is stopped (the spec's running → stopped on outbid).
  app.post("/_emulator/instances/:id/outbid", async (request) => {
    const id = Number((request.params as { id: string }).id);
    if (!market.instances.outbid(id)) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return { success: true };
  });

  app.post("/_emulator/users", async (request) => {
    const { email, credit } = parse(NewUser, request.body, "request");
    const user = market.accounts.addUser({ email, ...(credit !== undefined && { credit }) });
    const key = market.accounts.issueKey(user.id, { name: "control" });
    return { success: true, id: user.id, email: user.email, api_key: key.key };
  });

  app.post("/_emulator/faults", async (request) => {
    faults.add(parse(FaultSpec, request.body, "request"));
    return { success: true, faults: faults.list() };
  });

  app.delete("/_emulator/faults", async () => {
    faults.clear();
    return { success: true };
  });
}
