import { totp } from "../../sdk/tfa";
import { TfaLoginResponse, TfaStatusResponse } from "../../sdk/schemas/tfa";
import { SMS_RESEND_INTERVAL_MS } from "../../emulator/domain/tfa";
import { emulator, http } from "../helpers/emulator";
import { MINUTE, TfaHarness } from "../helpers/tfa";

/**
 * The 2FA part of the spec, section by section: caller types, status, login, sending codes, the email
 * prerequisite, team context, legacy accounts, deprecated paths, and the emulator's outbox.
 */
let h: TfaHarness;

beforeAll(async () => {
  h = await TfaHarness.start();
});
afterAll(() => h.close());

describe("caller types (the 2FA endpoint table)", () => {
  const BEARER_ONLY: [string, string][] = [
    ["GET", "/api/v0/tfa/status/"],
    ["POST", "/api/v0/tfa/authorize-new-method/"],
    ["PUT", "/api/v0/tfa/authorize-new-method/"],
    ["POST", "/api/v0/tfa/totp-setup/"],
    ["POST", "/api/v0/tfa/confirm-new/"],
    ["POST", "/api/v0/tfa/test-submit/"],
    ["DELETE", "/api/v0/tfa/"],
    ["PUT", "/api/v0/tfa/update/"],
    ["PUT", "/api/v0/tfa/regen-backup-codes/"],
  ];

  it.each(BEARER_ONLY)("%s %s refuses a logged-out caller (secret only) with 403 auth_error", async (method, path) => {
    const u = h.newUser();
    const { tfa_secret } = (await h.call("POST", "/_emulator/tfa/login-secret", { body: { user_id: u.user.id } })).body;
    const res = await h.call(method, path, { body: method === "GET" ? undefined : { secret: tfa_secret, tfa_method: "totp", code: "123456" } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: "auth_error", msg: expect.any(String) });
  });

  it("a logged-out caller completes a browser login by SMS with the secret only; the session comes as a cookie", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    await h.addSms(u, to);
    const { tfa_secret } = (await h.call("POST", "/_emulator/tfa/login-secret", { body: { user_id: u.user.id } })).body;
    const sent = await h.call("POST", "/api/v0/tfa/sms/", { body: { secret: tfa_secret } });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ msg: expect.stringContaining(to.slice(-4)), secret: tfa_secret });
    const res = await http(h.emu.url, "POST", "/api/v0/tfa/", { body: { tfa_method: "sms", code: await h.lastCode(to), secret: tfa_secret } });
    expect(res.status).toBe(200);
    expect(res.body.session_key).toBeUndefined();
    expect(res.body).toMatchObject({ id: u.user.id, email: u.user.email, tfa_status: "enabled" });
    const cookie = /session=([^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
    expect(cookie).toBeDefined();
    expect((await h.call("GET", "/api/v0/users/current/", { key: cookie })).body.id).toBe(u.user.id);
    // The login secret is spent.
    const again = await h.call("POST", "/api/v0/tfa/email/", { body: { secret: tfa_secret } });
    expect(again.body.error).toBe("auth_error");
  });

  it("a logged-out caller may send email codes and resend SMS codes with the secret only", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    await h.addSms(u, to);
    const { tfa_secret } = (await h.call("POST", "/_emulator/tfa/login-secret", { body: { user_id: u.user.id } })).body;
    const email = await h.call("POST", "/api/v0/tfa/email/", { body: { secret: tfa_secret } });
    expect(email.body).toEqual({ success: true, msg: expect.any(String), secret: tfa_secret });
    await h.call("POST", "/api/v0/tfa/sms/", { body: { secret: tfa_secret } });
    h.advance(SMS_RESEND_INTERVAL_MS);
    const resent = await h.call("POST", "/api/v0/tfa/sms/resend/", { body: { secret: tfa_secret } });
    expect(resent.status).toBe(200);
    expect(resent.body.secret).toBe(tfa_secret);
  });

  it("status needs user_read; changes need user_write", async () => {
    const u = h.newUser();
    const scoped = h.emu.marketplace.accounts.issueKey(u.user.id, { permissions: { api: { user_read: {} } } }).key;
    expect((await h.call("GET", "/api/v0/tfa/status/", { key: scoped })).status).toBe(200);
    const res = await h.call("POST", "/api/v0/tfa/totp-setup/", { key: scoped, body: {} });
    expect(res.status).toBe(403);
  });
});

describe("status", () => {
  it("reports tfa_enabled, methods, backup codes left and the add-method window", async () => {
    const u = h.newUser();
    const before = await h.status(u);
    expect(TfaStatusResponse.parse(before)).toEqual({ success: true, tfa_enabled: false, methods: [], backup_codes_remaining: 0, new_method_authorized: false });
    const to = h.newPhone();
    const { methodId } = await h.addSms(u, to, "Work phone");
    const after = await h.status(u);
    expect(after).toMatchObject({ success: true, tfa_enabled: true, backup_codes_remaining: 10, new_method_authorized: true });
    expect(after.methods).toEqual([
      {
        id: methodId,
        user_id: u.user.id,
        method: "sms",
        label: "Work phone",
        phone_number: "********" + to.slice(-4),
        is_primary: true,
        fail_count: 0,
        locked_until: null,
        created_at: Math.floor(h.now() / 1000),
        last_used: Math.floor(h.now() / 1000),
      },
    ]);
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("enabled");
  });
});

describe("complete login (POST /api/v0/tfa/)", () => {
  it("with an API key as bearer (CLI) returns the user object and a session_key usable as a bearer", async () => {
    const u = h.newUser({ fullName: "Ada" });
    const { secret } = await h.addTotp(u);
    const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } });
    expect(res.status).toBe(200);
    const body = TfaLoginResponse.parse(res.body);
    expect(body).toMatchObject({ id: u.user.id, email: u.user.email, full_name: "Ada", tfa_status: "enabled", session_key: expect.any(String) });
    expect(body.backup_codes_remaining).toBeUndefined();
    expect(body.legacy_tfa_user).toBeUndefined();
    const me = await h.call("GET", "/api/v0/users/current/", { key: body.session_key });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(u.user.id);
  });

  it("tfa_method defaults to sms; SMS and email codes need their secret and are single use", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    await h.addSms(u, to);
    const { secret, code } = await h.smsCode(u, { phone_number: to });
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { code } })).body.error).toBe("missing_params");
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { code, secret } })).status).toBe(200);
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { code, secret } })).body.error).toBe("challenge_not_found");
    const email = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    const byEmail = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code: await h.lastCode(u.user.email), secret: email.secret } });
    expect(byEmail.status).toBe(200);
  });

  it("an SMS login code expires after 10 minutes", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    await h.addSms(u, to);
    const first = await h.smsCode(u, { phone_number: to });
    h.advance(10 * MINUTE - 1);
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "sms", ...first } })).status).toBe(200);
    const second = await h.smsCode(u, { phone_number: to });
    h.advance(10 * MINUTE);
    const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "sms", ...second } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "2fa_expired", msg: expect.any(String) });
  });

  it("backup_codes_remaining appears after a backup code is used and is omitted when none remain", async () => {
    const u = h.newUser();
    const { backupCodes } = await h.addTotp(u);
    const remaining: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![i].toLowerCase() } });
      expect(res.status).toBe(200);
      remaining.push("backup_codes_remaining" in res.body ? res.body.backup_codes_remaining : "omitted");
    }
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, "omitted"]);
    expect((await h.status(u)).backup_codes_remaining).toBe(0);
  });

  it("an admin session needs an admin account", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const refused = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret), admin: true } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("2fa_login_failed");
    await h.setFlags(u, { is_admin: true });
    const admin = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret), admin: true } });
    expect(admin.status).toBe(200);
    expect(admin.body.session_key).toEqual(expect.any(String));
  });

  it("a TOTP code is accepted once, within one step of drift", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    h.advance(60_000);
    const previous = totp(secret, h.now() - 30_000);
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: previous } })).status).toBe(200);
    const replay = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: previous } });
    expect(replay.body).toMatchObject({ error: "2fa_login_failed", fail_count: 1 });
    const tooOld = totp(secret, h.now() - 90_000);
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: tooOld } })).body.error).toBe("2fa_login_failed");
  });
});

describe("sending codes", () => {
  it("email: with a bearer and no secret each call makes a fresh challenge; with a secret it stays", async () => {
    const u = h.newUser();
    const a = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    const b = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    expect(a.secret).not.toBe(b.secret);
    const c = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: { secret: b.secret } })).body;
    expect(c).toEqual({ success: true, msg: expect.any(String), secret: b.secret });
    expect(h.emu.marketplace.tfa.outbox.list({ to: u.user.email })).toHaveLength(3);
  });

  it("SMS goes to the method named by tfa_method_id, or the number on file", async () => {
    const u = h.newUser();
    const a = h.newPhone();
    const b = h.newPhone();
    await h.addSms(u, a);
    await h.authorize(u, { tfa_method: "sms", phone: a });
    const { methodId } = await h.addSms(u, b);
    h.advance(10 * MINUTE);
    await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { tfa_method_id: methodId } });
    expect(h.emu.marketplace.tfa.outbox.list({ channel: "sms" }).at(-1)!.to).toBe(b);
    const onFile = h.newPhone();
    await h.setFlags(u, { phone_number: onFile });
    await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: {} });
    expect(h.emu.marketplace.tfa.outbox.list({ channel: "sms" }).at(-1)!.to).toBe(onFile);
    const mismatch = await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { tfa_method_id: methodId, phone_number: a } });
    expect(mismatch.body.error).toBe("phone_number_mismatch");
  });

  it("resend: a new code after 30 s; with a bearer and no secret a new secret replaces the old", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    const first = await h.smsCode(u, { phone_number: to });
    h.advance(SMS_RESEND_INTERVAL_MS - 1);
    expect((await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { phone_number: to } })).body.error).toBe("sms_rate_limited");
    h.advance(1);
    const resent = await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { phone_number: to } });
    expect(resent.status).toBe(200);
    expect(resent.body.secret).not.toBe(first.secret);
    const code = await h.lastCode(to);
    expect(code).not.toBe(first.code);
    await h.authorize(u);
    const stale = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { tfa_method: "sms", code, secret: first.secret, phone_number: to } });
    expect(stale.body.error).toBe("challenge_not_found");
    const added = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { tfa_method: "sms", code, secret: resent.body.secret, phone_number: to } });
    expect(added.status).toBe(200);
  });

  it("resend renews an expired challenge's 10 minutes", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    const { secret } = await h.smsCode(u, { phone_number: to });
    h.advance(11 * MINUTE);
    expect((await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret } })).status).toBe(200);
    await h.authorize(u);
    const res = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { tfa_method: "sms", code: await h.lastCode(to), secret, phone_number: to } });
    expect(res.status).toBe(200);
  });
});

describe("email verification prerequisite and its exemptions", () => {
  it("admins are exempt on POST sms/ and sms/resend/ only", async () => {
    const u = h.newUser({ emailVerified: false, isAdmin: true });
    const to = h.newPhone();
    const sent = await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: to } });
    expect(sent.status).toBe(200);
    h.advance(SMS_RESEND_INTERVAL_MS);
    expect((await h.call("POST", "/api/v0/tfa/sms/resend/", { key: u.key, body: { secret: sent.body.secret } })).status).toBe(200);
    expect((await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body.error).toBe("email_not_verified");
    expect((await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} })).body.error).toBe("email_not_verified");
  });

  it("TOTP and backup-code authorization need no verified email", async () => {
    const u = h.newUser();
    const { secret, backupCodes } = await h.addTotp(u);
    await h.setFlags(u, { email_verified: false });
    const byTotp = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { tfa_method: "totp" } });
    expect(byTotp.body).toEqual({ success: true, secret: expect.any(String) });
    const confirm = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: h.freshTotp(secret), secret: byTotp.body.secret } });
    expect(confirm.body).toEqual({ success: true, msg: expect.any(String) });
    const byBackup = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { backup_code: backupCodes![0] } });
    expect(byBackup.body).toEqual({ success: true, msg: expect.any(String) });
    expect((await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { tfa_method: "email" } })).body.error).toBe("email_not_verified");
  });
});

describe("team context", () => {
  const ALL: [string, string][] = [
    ["GET", "/api/v0/tfa/status/"],
    ["POST", "/api/v0/tfa/"],
    ["POST", "/api/v0/tfa/email/"],
    ["POST", "/api/v0/tfa/sms/"],
    ["POST", "/api/v0/tfa/sms/resend/"],
    ["POST", "/api/v0/tfa/authorize-new-method/"],
    ["PUT", "/api/v0/tfa/authorize-new-method/"],
    ["POST", "/api/v0/tfa/totp-setup/"],
    ["POST", "/api/v0/tfa/confirm-new/"],
    ["DELETE", "/api/v0/tfa/"],
    ["PUT", "/api/v0/tfa/update/"],
    ["PUT", "/api/v0/tfa/regen-backup-codes/"],
    ["POST", "/api/v0/tfa/test/"],
    ["POST", "/api/v0/tfa/test-submit/"],
    ["POST", "/api/v0/tfa/resend/"],
  ];
  it.each(ALL)("%s %s is forbidden from a team context", async (method, path) => {
    const u = h.newUser({ teamContext: true });
    const res = await h.call(method, path, { key: u.key, body: method === "GET" ? undefined : { tfa_method: "totp" } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: "team_user_forbidden", msg: expect.any(String) });
  });
});

describe("legacy accounts", () => {
  it("log in by SMS to the number on file, are told they are legacy, and migrate by regenerating backup codes", async () => {
    const u = h.newUser();
    const onFile = h.newPhone();
    await h.setFlags(u, { phone_number: onFile, legacy_tfa: true });
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("legacy");
    expect(await h.status(u)).toMatchObject({ tfa_enabled: true, methods: [], backup_codes_remaining: 0 });

    const login = await h.smsCode(u);
    const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "sms", ...login } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ legacy_tfa_user: true, tfa_status: "legacy", session_key: expect.any(String) });

    h.advance(10 * MINUTE);
    const proof = await h.smsCode(u);
    const regen = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", ...proof } });
    expect(regen.status).toBe(200);
    expect(regen.body.backup_codes).toHaveLength(10);
    const status = await h.status(u);
    expect(status).toMatchObject({ tfa_enabled: true, backup_codes_remaining: 10 });
    expect(status.methods).toEqual([expect.objectContaining({ method: "sms", phone_number: expect.stringMatching(new RegExp(`${onFile.slice(-4)}$`)), is_primary: true })]);
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("enabled");
    // Migrated: the deprecated path no longer reports untracked 2FA.
    const submit = await h.call("POST", "/api/v0/tfa/test-submit/", { key: u.key, body: { tfa_method: "totp", code: "123456", secret: "x" } });
    expect(submit.body.error).toBe("authorization_required");
  });

  it("without a number on file cannot migrate (missing_phone_number)", async () => {
    const u = h.newUser();
    await h.setFlags(u, { legacy_tfa: true });
    const res = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", code: "123456", secret: "x" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("missing_phone_number");
  });
});

describe("deprecated paths (still active)", () => {
  it("POST test/ sends like sms/, resend/ resends like sms/resend/, test-submit/ adds like confirm-new/", async () => {
    const u = h.newUser();
    await h.authorize(u);
    const to = h.newPhone();
    const sent = await h.call("POST", "/api/v0/tfa/test/", { key: u.key, body: { phone_number: to } });
    expect(sent.body).toEqual({ msg: expect.any(String), secret: expect.any(String) });
    h.advance(SMS_RESEND_INTERVAL_MS);
    const resent = await h.call("POST", "/api/v0/tfa/resend/", { key: u.key, body: { secret: sent.body.secret, phone_number: to } });
    expect(resent.body.secret).toBe(sent.body.secret);
    const added = await h.call("POST", "/api/v0/tfa/test-submit/", {
      key: u.key,
      body: { tfa_method: "sms", code: await h.lastCode(to), secret: sent.body.secret, phone_number: to },
    });
    expect(added.status).toBe(200);
    expect(added.body.backup_codes).toHaveLength(10);
  });
});

describe("emulator control API: the outbox", () => {
  it("lists what was sent, filtered by recipient and channel, and clears", async () => {
    const u = h.newUser();
    await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} });
    const res = await h.call("GET", `/_emulator/outbox?to=${encodeURIComponent(u.user.email)}&channel=email`);
    expect(res.body.messages).toEqual([
      { id: expect.any(Number), channel: "email", to: u.user.email, user_id: u.user.id, code: expect.stringMatching(/^\d{6}$/), text: expect.any(String), sent_at: h.now() / 1000 },
    ]);
    expect(h.emu.marketplace.tfa.outbox.latest(u.user.email)!.code).toBe(res.body.messages[0].code);
    expect((await h.call("DELETE", "/_emulator/outbox")).status).toBe(200);
    expect((await h.call("GET", "/_emulator/outbox")).body.messages).toEqual([]);
  });

  it("is switched off with the control API", async () => {
    const off = await emulator({ offers: 5, controlApi: false });
    try {
      expect((await http(off.url, "GET", "/_emulator/outbox")).status).toBe(404);
      expect((await http(off.url, "PUT", "/_emulator/users/1", { body: { is_admin: true } })).status).toBe(404);
      // The service itself still answers, and the outbox is still there in-process.
      expect((await http(off.url, "POST", "/api/v0/tfa/email/", { key: off.apiKey, body: {} })).status).toBe(200);
      expect(off.marketplace.tfa.outbox.list()).toHaveLength(1);
    } finally {
      await off.close();
    }
  });
});
