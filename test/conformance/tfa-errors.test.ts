import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { totp } from "../../sdk/tfa";
import {
  LOCKOUT_MS,
  MAX_FAILED_ATTEMPTS,
  PREAUTH_PHONE_CAP,
  PREAUTH_PHONE_WINDOW_MS,
  SMS_RATE_LIMIT,
  SMS_RATE_WINDOW_MS,
  SMS_RESEND_INTERVAL_MS,
} from "../../emulator/domain/tfa";
import { MINUTE, TfaHarness, wrong } from "../helpers/tfa";

/**
 * The 2FA error table of the spec, row by row: each code is produced by the rule the spec gives it, over real
 * HTTP, and each test asserts the status and the body (`{error, msg}` plus the extra fields).
 */
const ERROR_TABLE: Record<string, number> = {
  bad_request: 400,
  auth_error: 403,
  invalid_tfa_method: 400,
  missing_auth_value: 400,
  missing_params: 400,
  email_not_verified: 400,
  "2fa_expired": 400,
  challenge_not_found: 400,
  no_challenge_found: 400,
  tfa_challenge_exists: 400,
  authorization_required: 403,
  no_pending_authorization: 400,
  invalid_backup_code: 401,
  untracked_2fa_found: 400,
  duplicate_tfa_method: 400,
  twilio_error: 400,
  preauth_phone_cap: 429,
  sms_rate_limited: 429,
  tfa_locked: 429,
  service_unavailable: 503,
  phone_number_mismatch: 400,
  "2fa_login_failed": 400,
  "2fa_verification_failed": 400,
  team_user_forbidden: 403,
  missing_email: 400,
  missing_phone_number: 400,
  not_found: 404,
  tfa_method_not_configured: 400,
  challenge_creation_failed: 500,
  sms_blocked_number: 400,
  sms_fraud_detected: 403,
  twilio_rate_limited: 429,
};

const exercised = new Set<string>();

/** Asserts a 2FA error answer: status, `{error, msg}`, and any extra fields given. */
function expectError(res: { status: number; body: any }, code: string, status = ERROR_TABLE[code], extra: Record<string, unknown> = {}) {
  expect({ status: res.status, error: res.body.error }).toEqual({ status, error: code });
  expect(typeof res.body.msg).toBe("string");
  expect(res.body.msg.length).toBeGreaterThan(0);
  expect(res.body).toMatchObject(extra);
  exercised.add(code);
}

let h: TfaHarness;

beforeAll(async () => {
  h = await TfaHarness.start();
});
afterAll(() => h.close());

describe("2FA error table", () => {
  it("bad_request 400: wrong types, malformed JSON, a code that is not 6 digits", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: 123456 } }), "bad_request");
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, rawBody: "{not json" }), "bad_request");
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: "12345" } }), "bad_request");
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: "0415 555 0100" } }), "bad_request");
  });

  it("auth_error 403: no bearer on a bearer-only endpoint, an invalid or revoked key, an unknown tfa_secret", async () => {
    expectError(await h.call("GET", "/api/v0/tfa/status/"), "auth_error");
    expectError(await h.call("GET", "/api/v0/tfa/status/", { key: "not-a-key" }), "auth_error");
    const u = h.newUser();
    const record = h.emu.marketplace.accounts.issueKey(u.user.id, { name: "soon revoked" });
    h.emu.marketplace.accounts.revokeKeyById(record.id);
    expectError(await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: record.key, body: {} }), "auth_error");
    expectError(await h.call("POST", "/api/v0/tfa/email/", { body: { secret: "unknown-secret" } }), "auth_error");
  });

  it("invalid_tfa_method 400: an unsupported tfa_method", async () => {
    const u = h.newUser();
    await h.addTotp(u);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "pigeon", code: "123456" } }), "invalid_tfa_method");
    // email is never a stored method: confirm-new and update refuse it.
    expectError(await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method: "email", label: "x" } }), "invalid_tfa_method");
  });

  it("invalid_tfa_method is checked before anything that depends on the caller: with and without a bearer, 2FA on or off", async () => {
    const plain = h.newUser(); // no 2FA: a login would be 2fa_login_failed
    const pigeon = { tfa_method: "pigeon", code: "123456" };
    expectError(await h.call("POST", "/api/v0/tfa/", { key: plain.key, body: pigeon }), "invalid_tfa_method");
    expectError(await h.call("POST", "/api/v0/tfa/", { body: pigeon }), "invalid_tfa_method");
    expectError(await h.call("POST", "/api/v0/tfa/", { body: { ...pigeon, secret: "unknown-secret" } }), "invalid_tfa_method");
    const team = h.newUser();
    await h.setFlags(team, { team_context: true }); // a team context is refused, but after the method's value
    for (const [method, path] of [["POST", "/api/v0/tfa/"], ["POST", "/api/v0/tfa/authorize-new-method/"], ["DELETE", "/api/v0/tfa/"], ["PUT", "/api/v0/tfa/regen-backup-codes/"], ["POST", "/api/v0/tfa/confirm-new/"], ["PUT", "/api/v0/tfa/update/"]]) {
      expectError(await h.call(method, path, { key: plain.key, body: pigeon }), "invalid_tfa_method");
      expectError(await h.call(method, path, { key: team.key, body: pigeon }), "invalid_tfa_method");
    }
  });

  it("missing_auth_value: 400 without code or backup_code; 401 without bearer and tfa_secret", async () => {
    const u = h.newUser();
    await h.addTotp(u);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp" } }), "missing_auth_value", 400);
    expectError(await h.call("POST", "/api/v0/tfa/", { body: { tfa_method: "totp", code: "123456" } }), "missing_auth_value", 401);
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { body: { phone_number: h.newPhone() } }), "missing_auth_value", 401);
  });

  it("missing_params 400: code and secret missing", async () => {
    const u = h.newUser();
    expectError(await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} }), "missing_params");
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { tfa_method: "totp" } }), "missing_params");
  });

  it("email_not_verified 400: sending codes needs a verified email, first-method setup included", async () => {
    const u = h.newUser({ emailVerified: false });
    expectError(await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} }), "email_not_verified");
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: h.newPhone() } }), "email_not_verified");
    expectError(await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} }), "email_not_verified");
  });

  it("2fa_expired 400: a challenge is valid for 10 minutes", async () => {
    const u = h.newUser();
    const start = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} });
    const code = await h.lastCode(u.user.email);
    h.advance(10 * MINUTE);
    expectError(await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code, secret: start.body.secret } }), "2fa_expired");
  });

  it("challenge_not_found 400: no challenge matches the secret", async () => {
    const u = h.newUser();
    await h.addTotp(u);
    expectError(
      await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code: "123456", secret: "no-such-secret" } }),
      "challenge_not_found",
    );
    // Another user's secret is no match either.
    const other = h.newUser();
    const { secret } = (await h.call("POST", "/api/v0/tfa/email/", { key: other.key, body: {} })).body;
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code: "123456", secret } }), "challenge_not_found");
  });

  it("no_challenge_found 400: resend with no SMS code sent in this context", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { phone_number: h.newPhone() } }), "no_challenge_found");
  });

  it("tfa_challenge_exists 400: a recent code was already sent to the number", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    expect((await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: to } })).status).toBe(200);
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: to } }), "tfa_challenge_exists");
  });

  it("authorization_required 403: adding a method without the add-method window", async () => {
    const u = h.newUser();
    const setup = (await h.call("POST", "/api/v0/tfa/totp-setup/", { key: u.key, body: {} })).body;
    const body = { tfa_method: "totp", code: totp(setup.secret, h.now()), secret: setup.secret };
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body }), "authorization_required");
  });

  it("no_pending_authorization 400: the PUT step with no POST before it", async () => {
    const u = h.newUser();
    expectError(await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: "123456", secret: "abc" } }), "no_pending_authorization");
  });

  it("invalid_backup_code 401: unknown or already used", async () => {
    const u = h.newUser();
    const { backupCodes } = await h.addTotp(u);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: "AAAA-BBBB-CCCC" } }), "invalid_backup_code");
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![0] } })).status).toBe(200);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![0] } }), "invalid_backup_code");
  });

  it("untracked_2fa_found 400: a legacy account on the deprecated test-submit path", async () => {
    const u = h.newUser();
    await h.setFlags(u, { phone_number: h.newPhone(), legacy_tfa: true });
    expectError(
      await h.call("POST", "/api/v0/tfa/test-submit/", { key: u.key, body: { tfa_method: "totp", code: "123456", secret: "x" } }),
      "untracked_2fa_found",
    );
  });

  it("duplicate_tfa_method 400: the method type is already configured", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    await h.authorize(u, { tfa_method: "totp", totpSecret: secret });
    const setup = (await h.call("POST", "/api/v0/tfa/totp-setup/", { key: u.key, body: {} })).body;
    const body = { tfa_method: "totp", code: totp(setup.secret, h.now()), secret: setup.secret };
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body }), "duplicate_tfa_method");
  });

  it("twilio_error 400: SMS delivery failed (reserved number +15005550001)", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: "+15005550001" } }), "twilio_error");
    expect(h.emu.marketplace.tfa.outbox.list({ to: "+15005550001" })).toHaveLength(0);
  });

  it(`preauth_phone_cap 429: a number that is no one's method gets at most ${PREAUTH_PHONE_CAP} codes a day`, async () => {
    const target = h.newPhone();
    for (let i = 0; i < PREAUTH_PHONE_CAP; i++) {
      expect((await h.call("POST", "/api/v0/tfa/sms/", { key: h.newUser().key, body: { phone_number: target } })).status).toBe(200);
    }
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: h.newUser().key, body: { phone_number: target } }), "preauth_phone_cap");
    h.advance(PREAUTH_PHONE_WINDOW_MS - 1);
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: h.newUser().key, body: { phone_number: target } }), "preauth_phone_cap");
    h.advance(1);
    expect((await h.call("POST", "/api/v0/tfa/sms/", { key: h.newUser().key, body: { phone_number: target } })).status).toBe(200);
  });

  it(`sms_rate_limited 429: at most ${SMS_RATE_LIMIT} SMS codes per user per hour, and resends wait`, async () => {
    const u = h.newUser();
    const { secret } = await h.smsCode(u, { phone_number: h.newPhone() });
    expectError(await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } }), "sms_rate_limited");
    for (let i = 1; i < SMS_RATE_LIMIT; i++) {
      h.advance(SMS_RESEND_INTERVAL_MS);
      expect((await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } })).status).toBe(200);
    }
    h.advance(SMS_RESEND_INTERVAL_MS);
    expectError(await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } }), "sms_rate_limited");
    // The window slides: an hour after the first send, one more code may go.
    h.advance(SMS_RATE_WINDOW_MS - SMS_RATE_LIMIT * SMS_RESEND_INTERVAL_MS - 1);
    expectError(await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } }), "sms_rate_limited");
    h.advance(1);
    expect((await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } })).status).toBe(200);
  });

  it(`tfa_locked 429: ${MAX_FAILED_ATTEMPTS} failures lock the method, with fail_count and locked_until`, async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const bad = wrong(h.freshTotp(secret));
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: bad } });
    const lockedUntil = Math.floor((h.now() + LOCKOUT_MS) / 1000);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: totp(secret, h.now()) } }), "tfa_locked", 429, {
      fail_count: MAX_FAILED_ATTEMPTS,
      locked_until: lockedUntil,
    });
  });

  it("service_unavailable 503: the backing store fails during the authorization check (control fault)", async () => {
    const u = h.newUser();
    await h.call("PUT", "/_emulator/tfa/faults", { body: { service_unavailable: 1 } });
    const setup = (await h.call("POST", "/api/v0/tfa/totp-setup/", { key: u.key, body: {} })).body;
    const body = { tfa_method: "totp", code: totp(setup.secret, h.now()), secret: setup.secret };
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body }), "service_unavailable");
    // One shot: the retry meets the real rule.
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body }), "authorization_required");
  });

  it("phone_number_mismatch 400: the number differs from the challenge or the method", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    const { secret, code } = await h.smsCode(u, { phone_number: to });
    h.advance(SMS_RESEND_INTERVAL_MS);
    expectError(await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret, phone_number: h.newPhone() } }), "phone_number_mismatch");
    await h.authorize(u);
    const body = { tfa_method: "sms", code, secret, phone_number: h.newPhone() };
    expectError(await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body }), "phone_number_mismatch");
  });

  it("2fa_login_failed 400: a wrong login code (with fail_count) or an unmet precondition", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: wrong(h.freshTotp(secret)) } });
    expectError(res, "2fa_login_failed", 400, { fail_count: 1, locked_until: null });
    const off = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/", { key: off.key, body: { tfa_method: "totp", code: "123456" } }), "2fa_login_failed");
  });

  it("2fa_verification_failed 400: a wrong code at a verify step (with fail_count and locked_until)", async () => {
    const u = h.newUser();
    const { secret, methodId } = await h.addTotp(u);
    const res = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: wrong(h.freshTotp(secret)) } });
    expectError(res, "2fa_verification_failed", 400, { fail_count: 1, locked_until: null });
    expect(h.emu.marketplace.tfa.methodsOf(u.user).map((m) => m.id)).toEqual([methodId]);
  });

  it("team_user_forbidden 403: 2FA from a team context", async () => {
    const u = h.newUser();
    await h.setFlags(u, { team_context: true });
    expectError(await h.call("GET", "/api/v0/tfa/status/", { key: u.key }), "team_user_forbidden");
    expectError(await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} }), "team_user_forbidden");
  });

  it("missing_email 400: the account has no email", async () => {
    const u = h.newUser();
    await h.setFlags(u, { email: "" });
    expectError(await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} }), "missing_email");
  });

  it("missing_phone_number 400: no number given, on a method or on file", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: {} }), "missing_phone_number");
  });

  it("not_found 404: tfa_method_id matches no method of this user", async () => {
    const u = h.newUser();
    const other = h.newUser();
    const { methodId } = await h.addTotp(other);
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { tfa_method_id: 999_999 } }), "not_found");
    expectError(await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method_id: methodId, label: "mine?" } }), "not_found");
  });

  it("tfa_method_not_configured 400: the TOTP secret is lost (control API)", async () => {
    const u = h.newUser();
    const { secret, methodId } = await h.addTotp(u);
    expect((await h.call("POST", `/_emulator/tfa/methods/${methodId}/lose-secret`)).status).toBe(200);
    expectError(await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } }), "tfa_method_not_configured");
  });

  it("challenge_creation_failed 500: authorize-new-method cannot create its challenge (control fault)", async () => {
    const u = h.newUser();
    await h.call("PUT", "/_emulator/tfa/faults", { body: { challenge_creation_failed: 1 } });
    expectError(await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} }), "challenge_creation_failed");
    expect((await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} })).status).toBe(200);
  });

  it("sms_blocked_number 400: a high-risk number (reserved +15005550004)", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: "+15005550004" } }), "sms_blocked_number");
  });

  it("sms_fraud_detected 403: the account is flagged (control API)", async () => {
    const u = h.newUser();
    await h.setFlags(u, { sms_fraud: true });
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: h.newPhone() } }), "sms_fraud_detected");
  });

  it("twilio_rate_limited 429: the SMS provider's own limit (reserved +15005550429)", async () => {
    const u = h.newUser();
    expectError(await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: "+15005550429" } }), "twilio_rate_limited");
  });

  it("covers every row of the error table, with the spec's status", () => {
    expect([...exercised].sort()).toEqual(Object.keys(ERROR_TABLE).sort());
  });

  // The repository's own copy of the table (emulator/TFA.md), first status of each row: always there.
  it("matches the error table the emulator documents (emulator/TFA.md)", () => {
    expect(tableRows(resolve(__dirname, "../../emulator/TFA.md"), "## Error codes and how to trigger them")).toEqual(ERROR_TABLE);
  });

  // The service's contract lives beside the repository only where the spec is shared (CI's machines): elsewhere
  // the comparison is reported skipped with its reason, never passed without running.
  const spec = resolve(__dirname, "../../../shared/spec/service-api.md");
  const specMissing = existsSync(spec) ? "" : ` (skipped: the service spec is not at ${spec} on this machine)`;
  if (specMissing) console.warn(`test/conformance/tfa-errors.test.ts${specMissing}`);
  (specMissing ? it.skip : it)(`matches the error table of the service spec${specMissing}`, () => {
    expect(tableRows(spec, "## Errors")).toEqual(ERROR_TABLE);
  });
});

/** The `| \`code\` | status |` rows of the section of `file` that starts with `heading`, code to status. */
function tableRows(file: string, heading: string): Record<string, number> {
  const section = readFileSync(file, "utf8").split(`\n${heading}\n`)[1].split("\n## ")[0];
  return Object.fromEntries([...section.matchAll(/^\| `([^`]+)` \| (\d{3})\b[^|]*\|/gm)].map((m) => [m[1], Number(m[2])]));
}
