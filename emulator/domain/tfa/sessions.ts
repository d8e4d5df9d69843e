import { TfaLoginRequest } from "../../../sdk/schemas/tfa";
import type { ApiKeyRecord, UserRecord } from "../records";
import { badRequest, forbidden, unauthorized } from "../errors";
import { SESSION_TTL_MS } from "./constants";
import { tfaEnabled } from "./methods";
import { TfaParts } from "./parts";
import { verify } from "./verification";

/* Who a 2FA call acts for, and the login that turns a second factor into a session key. */

/**
 * The user a 2FA call acts for: the bearer's, or (logged out) the owner of the challenge `secret` names.
 * Every 2FA endpoint goes through here, so the personal-context rule holds everywhere.
 */
export function caller(tfa: TfaParts, bearer: UserRecord | undefined, secret: string | undefined): UserRecord {
  let user = bearer;
  if (!user) {
    if (!secret) throw unauthorized("missing_auth_value", "Send a bearer key or the tfa_secret of your login.");
    const challenge = tfa.challenges.get(secret);
    user = challenge && tfa.accounts.user(challenge.userId);
    if (!user) throw forbidden("auth_error", "No valid authentication: the tfa_secret is unknown.");
  }
  if (user.teamContext) throw forbidden("team_user_forbidden", "2FA actions must be performed in your personal context, not a team context.");
  return user;
}

/** The password step of a browser login (not part of this API): a `tfa_secret` the logged-out calls use. */
export function beginLogin(tfa: TfaParts, user: UserRecord): string {
  return tfa.challenges.create(user, { channel: "none" }).secret;
}

/**
 * Completes a login: verifies the second factor and opens a session of `SESSION_TTL_MS`. The session may do
 * what the `presented` key may (a scoped key plus a second factor stays scoped); a browser login (a secret
 * and no key) gets full access, as a console login does.
 */
export function login(tfa: TfaParts, user: UserRecord, request: TfaLoginRequest, presented: ApiKeyRecord | undefined) {
  // The routes refuse instance keys already; a session without the instance binding would widen one.
  if (presented?.instanceId !== undefined) throw forbidden("permission_denied", "An instance API key cannot open a session.");
  if (!tfaEnabled(user)) throw badRequest("2fa_login_failed", "Two-factor authentication is not enabled on this account.");
  if (request.admin && !user.isAdmin) throw badRequest("2fa_login_failed", "An admin session needs an admin account.");
  const verified = verify(tfa, user, request, "login");
  // The login secret has served its purpose, whichever factor completed it.
  if (request.secret && tfa.challenges.get(request.secret)?.userId === user.id) tfa.challenges.delete(request.secret);
  const session = tfa.accounts.issueKey(user.id, {
    name: request.admin ? "admin session" : "session",
    permissions: presented?.permissions ?? null,
    session: true,
    expiresAt: tfa.clock.now() + SESSION_TTL_MS,
    // What the session rests on: revoking the key, or removing the method, ends it.
    sourceKeyId: presented?.id,
    tfaMethodId: verified.method?.id,
  });
  const remaining = tfa.backupCodes.active(user).length;
  return {
    sessionKey: session.key,
    backupCodesRemaining: verified.channel === "backup" && remaining > 0 ? remaining : undefined,
    legacy: user.tfaStatus === "legacy",
  };
}
