import { FastifyInstance } from "fastify";
import { User } from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** `GET /api/v0/users/current/`. */
export function registerUsers(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "GET",
    url: "/api/v0/users/current/",
    permission: "user_read",
    response: User,
    handler: ({ principal }) => {
      market.instances.settle();
      const { user } = principal;
      return {
        id: user.id,
        email: user.email,
        username: user.username,
        full_name: user.fullName,
        ssh_key: user.sshKey,
        credit: Number(user.credit.toFixed(6)),
        balance: Number(user.credit.toFixed(6)),
        email_verified: user.emailVerified,
        tfa_status: user.tfaStatus,
        api_key: principal.apiKey,
      };
    },
  });
}
