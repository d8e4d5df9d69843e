import { FastifyInstance } from "fastify";
import { InvoicesResponse, User } from "../../sdk/schemas";
import { UserRecord } from "../domain/accounts";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** `GET /api/v0/users/current/` and the invoices. */
export function registerUsers(app: FastifyInstance, market: Marketplace): void {
  registerInvoices(app, market);
  route(app, market, {
    method: "GET",
    url: "/api/v0/users/current/",
    permission: "user_read",
    response: User,
    handler: ({ principal }) => {
      market.instances.settle();
      return { ...userView(principal.user), api_key: principal.apiKey };
    },
  });
}

/** `GET /api/v0/users/me/invoices/`: the billing view, which keys scoped to the spec's four categories lack. */
function registerInvoices(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "GET",
    url: "/api/v0/users/me/invoices/",
    permission: "billing",
    response: InvoicesResponse,
    handler: ({ principal }) => {
      market.instances.settle();
      const invoices = market.billing.itemsOf(principal.user.id).map((item) => ({
        instance_id: item.instanceId,
        amount: Number(item.amount.toFixed(6)),
        start: item.from / 1000,
        end: item.to / 1000,
      }));
      return { credit: Number(principal.user.credit.toFixed(6)), invoices };
    },
  });
}

/** The user record on the wire (the 2FA login answer shows it too). */
export function userView(user: UserRecord) {
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
  };
}
