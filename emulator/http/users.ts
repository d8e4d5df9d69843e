import { FastifyInstance } from "fastify";
import { z } from "zod";
import { User } from "../../sdk/schemas";
import type { UserRecord } from "../domain/records";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** `GET /api/v0/users/current/`, and the GPU models of the market (which clients read to check names). */
export function registerUsers(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "GET",
    url: "/api/v0/gpu_names/unique/",
    // The public Python client asks without a key, at start.
    auth: "public",
    permission: "misc",
    response: z.looseObject({ gpu_names: z.array(z.string()) }),
    handler: () => ({ gpu_names: market.market.gpuNames() }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/users/current/",
    permission: "user_read",
    response: User,
    handler: ({ principal }) => {
      market.settle();
      // The key's id and a server id, as the vendor lists them (docs/service-facts.md#records-as-the-vendor-describes-them).
      return { ...userView(principal.user), api_key: principal.apiKey, key_id: principal.key.id, sid: "emulator" };
    },
  });
}

/**
 * The user record on the wire (the 2FA login answer shows it too). The name is `fullname`, as the live service
 * sends it (recorded), and `full_name`, as the spec shows it.
 */
export function userView(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    fullname: user.fullName,
    full_name: user.fullName,
    ssh_key: user.sshKey,
    credit: Number(user.credit.toFixed(6)),
    balance: Number(user.credit.toFixed(6)),
    email_verified: user.emailVerified,
    tfa_status: user.tfaStatus,
  };
}
