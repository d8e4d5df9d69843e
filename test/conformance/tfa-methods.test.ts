import { authenticator } from "otplib";
import { totp } from "../../sdk/tfa";
import { AUTHORIZATION_WINDOW_MS, LOCKOUT_MS, MAX_FAILED_ATTEMPTS } from "../../emulator/domain/tfa";
import { MINUTE, TfaHarness, wrong } from "../helpers/tfa";

/**
 * Methods and backup codes: the add-method flow and its 30-minute window, TOTP setup, update, removal (and 2FA
 * disabled with the last method), backup codes, and the per-method lockout, all on the controllable clock.
 */
let h: TfaHarness;
const BACKUP_CODE = /^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/;

beforeAll(async () => {
  h = await TfaHarness.start();
});
afterAll(() => h.close());

const totpBody = async (key: string, label?: string) => {
  const setup = (await h.call("POST", "/api/v0/tfa/totp-setup/", { key, body: {} })).body;
  return { tfa_method: "totp", code: totp(setup.secret, h.now()), secret: setup.secret, label };
};

describe("add a method: authorize (POST, PUT), then confirm", () => {
  it("a user with no methods is forced to email; the PUT grants the window; the first method returns 10 backup codes once", async () => {
    const u = h.newUser();
    const start = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { tfa_method: "totp" } });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ success: true, secret: expect.any(String) });
    expect(h.emu.marketplace.tfa.outbox.latest(u.user.email)).toBeDefined();
    expect((await h.status(u)).new_method_authorized).toBe(false);
    const put = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: await h.lastCode(u.user.email), secret: start.body.secret } });
    expect(put.body).toEqual({ success: true, msg: expect.any(String) });
    expect((await h.status(u)).new_method_authorized).toBe(true);

    const first = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: await totpBody(u.key) });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, msg: expect.any(String), backup_codes: expect.any(Array) });
    const codes: string[] = first.body.backup_codes;
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(BACKUP_CODE);
    expect(new Set(codes).size).toBe(10);

    const to = h.newPhone();
    const sent = await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: to } });
    const second = await h.call("POST", "/api/v0/tfa/confirm-new/", {
      key: u.key,
      body: { tfa_method: "sms", code: await h.lastCode(to), secret: sent.body.secret, phone_number: to },
    });
    expect(second.body).toEqual({ success: true, msg: expect.any(String) });
    const status = await h.status(u);
    expect(status).toMatchObject({ tfa_enabled: true, backup_codes_remaining: 10 });
    expect(status.methods.map((m: { method: string; is_primary: boolean }) => [m.method, m.is_primary])).toEqual([
      ["totp", true],
      ["sms", false],
    ]);
  });

  it("the window lasts 30 minutes", async () => {
    const u = h.newUser();
    await h.authorize(u);
    h.advance(AUTHORIZATION_WINDOW_MS - 1);
    expect((await h.status(u)).new_method_authorized).toBe(true);
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: await totpBody(u.key) })).status).toBe(200);
    h.advance(1);
    expect((await h.status(u)).new_method_authorized).toBe(false);
    const to = h.newPhone();
    const sent = await h.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: to } });
    const late = await h.call("POST", "/api/v0/tfa/confirm-new/", {
      key: u.key,
      body: { tfa_method: "sms", code: await h.lastCode(to), secret: sent.body.secret, phone_number: to },
    });
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ error: "authorization_required", msg: expect.any(String) });
  });

  it("the authorize challenge expires after 10 minutes", async () => {
    const u = h.newUser();
    const a = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} });
    const codeA = await h.lastCode(u.user.email);
    h.advance(10 * MINUTE - 1);
    expect((await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: codeA, secret: a.body.secret } })).status).toBe(200);
    const b = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: {} });
    const codeB = await h.lastCode(u.user.email);
    h.advance(10 * MINUTE);
    const res = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: codeB, secret: b.body.secret } });
    expect(res.body.error).toBe("2fa_expired");
  });

  it("authorizes by an SMS method (code sent to its number) and by tfa_method_id", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    const { methodId } = await h.addSms(u, to);
    h.advance(AUTHORIZATION_WINDOW_MS);
    h.emu.marketplace.tfa.outbox.clear();
    const start = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { tfa_method_id: methodId } });
    expect(start.body).toEqual({ success: true, secret: expect.any(String) });
    const wrongPut = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: wrong(await h.lastCode(to)), secret: start.body.secret } });
    expect(wrongPut.body).toMatchObject({ error: "2fa_verification_failed", fail_count: 1, locked_until: null });
    const otherSecret = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: await h.lastCode(to), secret: "other" } });
    expect(otherSecret.body.error).toBe("challenge_not_found");
    const ok = await h.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code: await h.lastCode(to), secret: start.body.secret } });
    expect(ok.status).toBe(200);
    expect((await h.status(u)).methods[0].fail_count).toBe(0);
  });
});

describe("TOTP setup", () => {
  it("returns a base32 secret and an otpauth URI, adds no method, and any authenticator library agrees on the codes", async () => {
    const u = h.newUser();
    const res = await h.call("POST", "/api/v0/tfa/totp-setup/", { key: u.key, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(res.body.provisioning_uri);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.searchParams.get("secret")).toBe(res.body.secret);
    expect(uri.searchParams.get("issuer")).toBeTruthy();
    expect((await h.status(u)).methods).toEqual([]);

    await h.authorize(u);
    authenticator.options = { epoch: h.now() };
    const code = authenticator.generate(res.body.secret);
    const added = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { tfa_method: "totp", code, secret: res.body.secret } });
    expect(added.status).toBe(200);
    authenticator.resetOptions();
  });

  it("confirm-new refuses a wrong code (no fail_count: not a configured method) and a secret that is not base32", async () => {
    const u = h.newUser();
    await h.authorize(u);
    const body = await totpBody(u.key);
    const res = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { ...body, code: wrong(body.code) } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("2fa_verification_failed");
    expect(res.body).not.toHaveProperty("fail_count");
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { ...body, secret: "not base32!" } })).body.error).toBe("bad_request");
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { ...body, tfa_method: "email" } })).body.error).toBe("invalid_tfa_method");
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { code: body.code, secret: body.secret } })).body.error).toBe("bad_request");
  });
});

describe("labels (at most 30 characters) and update", () => {
  it("accepts 30 characters, refuses 31, and defaults to a readable label", async () => {
    const u = h.newUser();
    await h.authorize(u);
    const long = await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: await totpBody(u.key, "x".repeat(31)) });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ error: "bad_request", msg: expect.stringContaining("label") });
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: await totpBody(u.key, "x".repeat(30)) })).status).toBe(200);
    const to = h.newPhone();
    await h.addSms(u, to);
    const labels = (await h.status(u)).methods.map((m: { label: string }) => m.label);
    expect(labels).toEqual(["x".repeat(30), `SMS ********${to.slice(-4)}`]);
  });

  it("relabels and makes primary; several of a type need tfa_method_id", async () => {
    const u = h.newUser();
    const a = await h.addSms(u, h.newPhone());
    const b = await h.addSms(u, h.newPhone());
    const res = await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method_id: b.methodId, label: "Backup phone", is_primary: true } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, msg: expect.any(String), method: { id: b.methodId, label: "Backup phone", is_primary: true, method: "sms" } });
    const methods = (await h.status(u)).methods;
    expect(methods.find((m: { id: number }) => m.id === a.methodId).is_primary).toBe(false);
    expect((await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method: "sms", label: "?" } })).body.error).toBe("bad_request");
    expect((await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method_id: a.methodId, label: "y".repeat(31) } })).body.error).toBe("bad_request");
    expect((await h.call("PUT", "/api/v0/tfa/update/", { key: u.key, body: { tfa_method: "totp", label: "none" } })).status).toBe(404);
  });
});

describe("remove a method (DELETE /api/v0/tfa/)", () => {
  it("removes the verifying method by default, or target_id; the primary passes on", async () => {
    const u = h.newUser();
    const { secret, methodId: totpId } = await h.addTotp(u);
    await h.authorize(u, { tfa_method: "totp", totpSecret: secret });
    const smsA = await h.addSms(u, h.newPhone());
    const smsB = await h.addSms(u, h.newPhone());
    const byTarget = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret), target_id: smsA.methodId } });
    expect(byTarget.body).toEqual({ msg: expect.any(String), remaining_methods: 2 });
    const byDefault = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } });
    expect(byDefault.body).toEqual({ msg: expect.any(String), remaining_methods: 1 });
    const left = (await h.status(u)).methods;
    expect(left).toEqual([expect.objectContaining({ id: smsB.methodId, is_primary: true })]);
    expect(left.some((m: { id: number }) => m.id === totpId)).toBe(false);
  });

  it("a backup code needs target_id; SMS and email verification need the secret", async () => {
    const u = h.newUser();
    const { backupCodes, methodId } = await h.addTotp(u);
    const noTarget = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![0] } });
    expect(noTarget.body.error).toBe("bad_request");
    const noSecret = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code: "123456", target_id: methodId } });
    expect(noSecret.body.error).toBe("missing_params");
    // The refused call did not spend the backup code.
    expect((await h.status(u)).backup_codes_remaining).toBe(10);
  });

  it("the last method going disables 2FA and soft-deletes the backup codes", async () => {
    const u = h.newUser();
    const { backupCodes, methodId } = await h.addTotp(u);
    const res = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![0], target_id: methodId } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ msg: expect.stringContaining("disabled") });
    expect(await h.status(u)).toEqual({ success: true, tfa_enabled: false, methods: [], backup_codes_remaining: 0, new_method_authorized: false });
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("disabled");
    const stale = await h.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { backup_code: backupCodes![1] } });
    expect(stale.status).toBe(401);
    expect(stale.body.error).toBe("invalid_backup_code");
    // Soft deletion: the rows remain, marked deleted.
    const rows = h.emu.marketplace.tfa.snapshot().backupCodes.filter((c) => c.userId === u.user.id);
    expect(rows).toHaveLength(10);
    expect(rows.every((c) => c.deletedAt !== null)).toBe(true);
  });
});

describe("backup codes", () => {
  it("regenerating replaces all with 10 new ones, after verification", async () => {
    const u = h.newUser();
    const { secret, backupCodes } = await h.addTotp(u);
    const refused = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "totp", code: wrong(h.freshTotp(secret)) } });
    expect(refused.body.error).toBe("2fa_verification_failed");
    const res = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { backup_code: backupCodes![0] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ msg: expect.any(String), backup_codes: expect.any(Array) });
    expect(res.body.backup_codes).toHaveLength(10);
    for (const code of res.body.backup_codes) expect(code).toMatch(BACKUP_CODE);
    expect((await h.status(u)).backup_codes_remaining).toBe(10);
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: backupCodes![1] } })).body.error).toBe("invalid_backup_code");
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { backup_code: res.body.backup_codes[0] } })).status).toBe(200);
  });

  it("regenerating by SMS needs the secret", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    await h.addSms(u, to);
    const { code } = await h.smsCode(u, { phone_number: to });
    expect((await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", code } })).body.error).toBe("missing_params");
  });

  it("an account without 2FA has none to regenerate", async () => {
    const u = h.newUser();
    const res = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { backup_code: "AAAA-BBBB-CCCC" } });
    expect(res.body.error).toBe("2fa_verification_failed");
  });
});

describe("per-method lockout", () => {
  it(`${MAX_FAILED_ATTEMPTS} failures lock one method for 15 minutes; other methods still work; then it unlocks`, async () => {
    const u = h.newUser();
    const { secret, methodId } = await h.addTotp(u);
    await h.authorize(u, { tfa_method: "totp", totpSecret: secret });
    const to = h.newPhone();
    await h.addSms(u, to);
    const bad = wrong(h.freshTotp(secret));
    for (let i = 1; i < MAX_FAILED_ATTEMPTS; i++) {
      const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: bad } });
      expect(res.body).toMatchObject({ error: "2fa_login_failed", fail_count: i, locked_until: null });
    }
    const locking = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: bad } });
    const lockedUntil = Math.floor((h.now() + LOCKOUT_MS) / 1000);
    expect(locking.body).toMatchObject({ error: "2fa_login_failed", fail_count: MAX_FAILED_ATTEMPTS, locked_until: lockedUntil });
    const totpView = (await h.status(u)).methods.find((m: { id: number }) => m.id === methodId);
    expect(totpView).toMatchObject({ fail_count: MAX_FAILED_ATTEMPTS, locked_until: lockedUntil });

    // Not account-wide: the SMS method still logs in.
    const sms = await h.smsCode(u, { phone_number: to });
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "sms", ...sms } })).status).toBe(200);

    h.advance(LOCKOUT_MS - 1);
    const still = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: totp(secret, h.now()) } });
    expect(still.status).toBe(429);
    expect(still.body).toMatchObject({ error: "tfa_locked", fail_count: MAX_FAILED_ATTEMPTS, locked_until: lockedUntil });
    h.advance(1);
    expect((await h.status(u)).methods.find((m: { id: number }) => m.id === methodId)).toMatchObject({ fail_count: 0, locked_until: null });
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: totp(secret, h.now()) } })).status).toBe(200);
  });

  it("a success clears the failures", async () => {
    const u = h.newUser();
    const { secret, methodId } = await h.addTotp(u);
    const bad = wrong(h.freshTotp(secret));
    for (let i = 1; i < MAX_FAILED_ATTEMPTS; i++) await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: bad } });
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: totp(secret, h.now()) } })).status).toBe(200);
    expect((await h.status(u)).methods.find((m: { id: number }) => m.id === methodId).fail_count).toBe(0);
  });

  it("SMS failures count on the SMS method too", async () => {
    const u = h.newUser();
    const to = h.newPhone();
    const { methodId } = await h.addSms(u, to);
    const { secret, code } = await h.smsCode(u, { phone_number: to });
    for (let i = 1; i <= MAX_FAILED_ATTEMPTS; i++) await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { code: wrong(code), secret } });
    const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { code, secret, tfa_method_id: methodId } });
    expect(res.status).toBe(429);
    expect(res.body.error).toBe("tfa_locked");
  });
});
