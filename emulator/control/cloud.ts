import { FastifyInstance } from "fastify";
import { z } from "zod";
import { cloudConnections } from "../domain/cloud";
import { badRequest, notFound } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { parse } from "../http/routes";
import { cloudConnectionView } from "../http/views/account";

const NewConnection = z.object({
  /** Whose (default the seeded user). */
  user_id: z.number().int().optional(),
  name: z.string().min(1).max(120),
  cloud_type: z.string().regex(/^[a-z0-9_]{1,20}$/).default("s3"),
}).strict();

/**
 * Cloud connections as the service's console makes them (signing in to the cloud), and the copies that ran:
 * `POST /_emulator/cloud-connections` answers the folder standing for the new connection's bucket;
 * `GET /_emulator/transfers` lists the copies and cloud copies with their state (emulator/domain/instance-work.ts).
 */
export function registerCloudControl(app: FastifyInstance, market: Marketplace): void {
  app.post("/_emulator/cloud-connections", async (request) => {
    const body = parse(NewConnection, request.body, "request");
    const user = market.accounts.user(body.user_id ?? market.seededUser.id);
    if (!user) throw notFound("no_such_user", `No user ${body.user_id}.`);
    if (!market.cloudRoot) throw badRequest("invalid_args", "This emulator keeps no files for cloud connections.");
    const nextId = 1 + Math.max(1000, ...market.accounts.allUsers().flatMap((u) => cloudConnections.of(u).map((c) => c.id)));
    const connection = cloudConnections.add(user, market.cloudRoot, { name: body.name, cloudType: body.cloud_type }, nextId);
    return { success: true, ...cloudConnectionView(connection), folder: connection.folder };
  });

  app.get("/_emulator/transfers", async (request) => {
    const userId = Number((request.query as { user_id?: string }).user_id ?? market.seededUser.id);
    return { transfers: market.instanceWork.transfersOf(userId) };
  });
}
