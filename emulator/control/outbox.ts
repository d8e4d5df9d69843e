import { FastifyInstance } from "fastify";
import { z } from "zod";
import { PhoneNumber } from "../../sdk/schemas/tfa";
import { notFound } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { idParam, parse } from "../http/routes";
import { userView } from "../http/users";
import { OutboxMessage } from "../domain/tfa";

/**
 * EMULATOR CONTROL API for 2FA, never under `/api/v0/`: not part of the service. It shows the SMS and email
 * codes the emulator "sent" (the outbox) and sets the account facts 2FA rules depend on. Registered only with
 * the control API (`controlApi: false` / `--no-control` switches it off). See emulator/TFA.md.
 */
const OutboxQuery = z.object({ to: z.string().optional(), channel: z.enum(["sms", "email"]).optional() });

const UserFlags = z
  .object({
    /** `""` leaves the account without email (`missing_email`). */
    email: z.string().optional(),
    email_verified: z.boolean().optional(),
    is_admin: z.boolean().optional(),
    team_context: z.boolean().optional(),
    sms_fraud: z.boolean().optional(),
    /** The number on file; `null` removes it. */
    phone_number: PhoneNumber.nullable().optional(),
    /** Turns the account into a legacy 2FA account (it must have no methods). */
    legacy_tfa: z.literal(true).optional(),
    /** Whether the account has network volumes (not generally released on the live service); default true. */
    network_volumes: z.boolean().optional(),
  })
  .strict();

const LoginSecret = z.object({ user_id: z.number().int() }).strict();
const Faults = z.object({ service_unavailable: z.number().int().min(0).optional(), challenge_creation_failed: z.number().int().min(0).optional() }).strict();


export function registerOutbox(app: FastifyInstance, market: Marketplace): void {
  const { tfa, accounts } = market;
  const userOf = (params: unknown) => {
    const id = idParam(params as Record<string, string>, "id");
    const user = accounts.user(id);
    if (!user) throw notFound("not_found", `No user ${id}.`);
    return user;
  };

  /** `GET /_emulator/outbox?to=<phone or email>&channel=sms|email`: the codes sent, oldest first. */
  app.get("/_emulator/outbox", async (request) => ({ messages: tfa.outbox.list(parse(OutboxQuery, request.query, "request")).map(messageView) }));

  app.delete("/_emulator/outbox", async () => {
    tfa.outbox.clear();
    return { success: true };
  });

  /** Sets the account facts 2FA rules read: verified email, admin, team context, SMS fraud flag, phone, legacy. */
  app.put("/_emulator/users/:id", async (request) => {
    const user = userOf(request.params);
    const flags = parse(UserFlags, request.body, "request");
    if (flags.email !== undefined) user.email = flags.email;
    if (flags.email_verified !== undefined) user.emailVerified = flags.email_verified;
    if (flags.is_admin !== undefined) user.isAdmin = flags.is_admin;
    if (flags.team_context !== undefined) user.teamContext = flags.team_context;
    if (flags.sms_fraud !== undefined) user.smsFraud = flags.sms_fraud;
    if (flags.phone_number !== undefined) user.phoneNumber = flags.phone_number ?? undefined;
    if (flags.legacy_tfa) tfa.makeLegacy(user);
    if (flags.network_volumes !== undefined) user.networkVolumes = flags.network_volumes;
    return {
      success: true,
      user: {
        ...userView(user),
        is_admin: user.isAdmin ?? false,
        team_context: user.teamContext ?? false,
        sms_fraud: user.smsFraud ?? false,
        phone_number: user.phoneNumber ?? null,
        network_volumes: user.networkVolumes ?? true,
      },
    };
  });

  /** The password step of a browser login (outside this API): a `tfa_secret` for the logged-out 2FA calls. */
  app.post("/_emulator/tfa/login-secret", async (request) => {
    const { user_id } = parse(LoginSecret, request.body, "request");
    return { tfa_secret: tfa.beginLogin(userOf({ id: user_id })) };
  });

  /** One-shot backing-store failures: the next N checks fail (`service_unavailable`, `challenge_creation_failed`). */
  app.put("/_emulator/tfa/faults", async (request) => {
    const faults = parse(Faults, request.body, "request");
    if (faults.service_unavailable !== undefined) tfa.faults.serviceUnavailable = faults.service_unavailable;
    if (faults.challenge_creation_failed !== undefined) tfa.faults.challengeCreationFailed = faults.challenge_creation_failed;
    return { success: true, service_unavailable: tfa.faults.serviceUnavailable, challenge_creation_failed: tfa.faults.challengeCreationFailed };
  });

  /** Loses a TOTP method's secret (as if undecryptable): verifying with it gives `tfa_method_not_configured`. */
  app.post("/_emulator/tfa/methods/:id/lose-secret", async (request) => {
    tfa.loseTotpSecret(idParam(request.params as Record<string, string>, "id"));
    return { success: true };
  });
}

function messageView(message: OutboxMessage) {
  return {
    id: message.id,
    channel: message.channel,
    to: message.to,
    user_id: message.userId,
    code: message.code,
    text: message.text,
    sent_at: message.sentAt / 1000,
  };
}
