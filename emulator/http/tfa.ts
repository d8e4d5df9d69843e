import { FastifyInstance } from "fastify";
import {
  AuthorizeNewMethodRequest,
  AuthorizeNewMethodResponse,
  ConfirmAuthorizationRequest,
  ConfirmNewMethodRequest,
  ConfirmNewMethodResponse,
  RegenBackupCodesRequest,
  RegenBackupCodesResponse,
  RemoveMethodRequest,
  RemoveMethodResponse,
  SendCodeResponse,
  SendEmailCodeRequest,
  SendSmsCodeRequest,
  TfaLoginRequest,
  TfaLoginResponse,
  TfaMessageResponse,
  TfaStatusResponse,
  TotpSetupResponse,
  UpdateMethodRequest,
  UpdateMethodResponse,
} from "../../sdk/schemas/tfa";
import { Marketplace } from "../domain/marketplace";
import { SESSION_TTL_MS } from "../domain/tfa";
import { RouteErrors, SESSION_COOKIE, route } from "./routes";
import { userView } from "./users";
import { tfaMethodView, tfaStatusView } from "./views/tfa";

/** The 2FA error contract: a bad body is `bad_request`, a missing or invalid bearer is 403 `auth_error`. */
const TFA_ERRORS: RouteErrors = { invalidBody: "bad_request", authKind: "forbidden" };
/**
 * What every 2FA endpoint may answer beyond the common refusals (the spec's 2FA error table): 401
 * `invalid_backup_code` (and `missing_auth_value` without a bearer or secret), 404 `not_found`,
 * 429 (`tfa_locked`, `sms_rate_limited`, ...), 500 `challenge_creation_failed`, 503 `service_unavailable`; and
 * the 400s of its rules, which depend on the account's state, not on the request's shape.
 */
const TFA_CONTRACT = {
  errors: TFA_ERRORS,
  refusals: ["unauthorized", "not_found", "rate_limited", "internal", "unavailable"],
  rules: "the 2FA error table: a wrong or expired code, an unknown challenge or secret, no 2FA or no such method, an email not verified, a method already configured, a team context, ...",
} as const;
/** Endpoints a logged-out caller may use with a `tfa_secret` only (the spec's 2FA endpoint table). */
const SECRET_OR_BEARER = { auth: "optional", permission: "user_write", ...TFA_CONTRACT } as const;
const BEARER = { permission: "user_write", ...TFA_CONTRACT } as const;

/**
 * `/api/v0/tfa/...`: every endpoint of the 2FA table, including the three deprecated paths. The rules are in
 * the domain (emulator/domain/tfa/, documented in emulator/TFA.md); this layer only names the caller and
 * shapes the answers.
 */
export function registerTfa(app: FastifyInstance, market: Marketplace): void {
  const tfa = market.tfa;

  route(app, market, {
    ...BEARER,
    permission: "user_read",
    method: "GET",
    url: "/api/v0/tfa/status/",
    response: TfaStatusResponse,
    handler: ({ principal }) => tfaStatusView(tfa.status(tfa.caller(principal.user, undefined))),
  });

  route(app, market, {
    ...SECRET_OR_BEARER,
    method: "POST",
    url: "/api/v0/tfa/",
    body: TfaLoginRequest,
    response: TfaLoginResponse,
    handler: ({ principal, body, reply }) => {
      const user = tfa.caller(principal?.user, body.secret);
      const session = tfa.login(user, body, principal?.key);
      // A CLI caller (a key as bearer) gets the session key in the body; a browser (secret only) a cookie, which
      // the browser drops when the session expires (the emulator refuses it from then on in any case).
      const maxAge = SESSION_TTL_MS / 1000;
      if (!principal) reply.header("set-cookie", `${SESSION_COOKIE}=${session.sessionKey}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax`);
      return {
        ...userView(user),
        ...(principal && { session_key: session.sessionKey }),
        ...(session.backupCodesRemaining !== undefined && { backup_codes_remaining: session.backupCodesRemaining }),
        ...(session.legacy && { legacy_tfa_user: true }),
      };
    },
  });

  route(app, market, {
    ...SECRET_OR_BEARER,
    method: "POST",
    url: "/api/v0/tfa/email/",
    body: SendEmailCodeRequest,
    response: SendCodeResponse,
    handler: ({ principal, body }) => {
      const challenge = tfa.sendEmailCode(tfa.caller(principal?.user, body.secret), body.secret);
      return { success: true, msg: "A code was sent to your email address.", secret: challenge.secret };
    },
  });

  // Send and resend, each also at its deprecated path.
  const smsSenders = [
    { urls: ["/api/v0/tfa/sms/", "/api/v0/tfa/test/"], send: tfa.sendSmsCode.bind(tfa), msg: "A code was sent" },
    { urls: ["/api/v0/tfa/sms/resend/", "/api/v0/tfa/resend/"], send: tfa.resendSmsCode.bind(tfa), msg: "A new code was sent" },
  ];
  for (const { urls, send, msg } of smsSenders) {
    for (const url of urls) {
      route(app, market, {
        ...SECRET_OR_BEARER,
        method: "POST",
        url,
        body: SendSmsCodeRequest,
        response: SendCodeResponse,
        handler: ({ principal, body }) => {
          const challenge = send(tfa.caller(principal?.user, body.secret), body);
          return { msg: `${msg} by SMS to ${maskedEnd(challenge.phoneNumber)}.`, secret: challenge.secret };
        },
      });
    }
  }

  route(app, market, {
    ...BEARER,
    method: "POST",
    url: "/api/v0/tfa/authorize-new-method/",
    body: AuthorizeNewMethodRequest,
    response: AuthorizeNewMethodResponse,
    handler: ({ principal, body }) => {
      const { secret } = tfa.authorizeNewMethod(tfa.caller(principal.user, undefined), body);
      return secret ? { success: true, secret } : { success: true, msg: "Authorized to add a method for 30 minutes." };
    },
  });

  route(app, market, {
    ...BEARER,
    method: "PUT",
    url: "/api/v0/tfa/authorize-new-method/",
    body: ConfirmAuthorizationRequest,
    response: TfaMessageResponse,
    handler: ({ principal, body }) => {
      tfa.confirmAuthorization(tfa.caller(principal.user, undefined), body);
      return { success: true, msg: "Authorized to add a method for 30 minutes." };
    },
  });

  route(app, market, {
    ...BEARER,
    method: "POST",
    url: "/api/v0/tfa/totp-setup/",
    response: TotpSetupResponse,
    handler: ({ principal }) => tfa.totpSetup(tfa.caller(principal.user, undefined)),
  });

  for (const [url, deprecatedPath] of [["/api/v0/tfa/confirm-new/", false], ["/api/v0/tfa/test-submit/", true]] as const) {
    route(app, market, {
      ...BEARER,
      method: "POST",
      url,
      body: ConfirmNewMethodRequest,
      response: ConfirmNewMethodResponse,
      handler: ({ principal, body }) => {
        const { method, backupCodes } = tfa.confirmNewMethod(tfa.caller(principal.user, undefined), body, deprecatedPath);
        return { success: true, msg: `Added ${method.method} method ${method.id}.`, ...(backupCodes && { backup_codes: backupCodes }) };
      },
    });
  }

  route(app, market, {
    ...BEARER,
    method: "DELETE",
    url: "/api/v0/tfa/",
    body: RemoveMethodRequest,
    response: RemoveMethodResponse,
    handler: ({ principal, body }) => {
      const { remaining } = tfa.removeMethod(tfa.caller(principal.user, undefined), body);
      return remaining > 0
        ? { msg: "The method was removed.", remaining_methods: remaining }
        : { msg: "The last method was removed: two-factor authentication is disabled." };
    },
  });

  route(app, market, {
    ...BEARER,
    method: "PUT",
    url: "/api/v0/tfa/update/",
    body: UpdateMethodRequest,
    response: UpdateMethodResponse,
    handler: ({ principal, body }) => {
      const method = tfa.updateMethod(tfa.caller(principal.user, undefined), body);
      return { success: true, msg: "The method was updated.", method: tfaMethodView(tfa.current(method)) };
    },
  });

  route(app, market, {
    ...BEARER,
    method: "PUT",
    url: "/api/v0/tfa/regen-backup-codes/",
    body: RegenBackupCodesRequest,
    response: RegenBackupCodesResponse,
    handler: ({ principal, body }) => {
      const codes = tfa.regenerateBackupCodes(tfa.caller(principal.user, undefined), body);
      return { msg: "New backup codes; the old ones no longer work. They are shown only now.", backup_codes: codes };
    },
  });
}

function maskedEnd(phone: string | undefined): string {
  return `a number ending in ${(phone ?? "").slice(-4)}`;
}
