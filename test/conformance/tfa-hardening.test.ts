import { createHash } from "node:crypto";
import { Accounts } from "../../emulator/domain/accounts";
import { Clock } from "../../emulator/domain/clock";
import { Random } from "../../emulator/domain/random";
import { CHALLENGE_TTL_MS, MAX_FAILED_ATTEMPTS, PURGE_AFTER_MS, SESSION_TTL_MS, Tfa, TfaSnapshot } from "../../emulator/domain/tfa";
import { http } from "../helpers/emulator";
import { TfaHarness, TfaUser, wrong } from "../helpers/tfa";
import { scratchFolders } from "../helpers/paths";

/**
 * The fixes of the 2FA security review, each over real HTTP: randomness that survives a restart, legacy
 * migration only after verification, a guess limit on every code, sessions (scope, cookie, lifetime, listing),
 * and a state that does not grow forever nor keep codes in plaintext.
 */
let h: TfaHarness;

beforeAll(async () => {
  h = await TfaHarness.start();
});
afterAll(() => h.close());

/** The 2FA part of what a `--data-dir` would save now. */
const savedTfa = (harness: TfaHarness) => harness.emu.marketplace.snapshot().parts.tfa as TfaSnapshot & Record<string, unknown>;

const loginSecret = async (u: TfaUser): Promise<string> =>
  (await h.call("POST", "/_emulator/tfa/login-secret", { body: { user_id: u.user.id } })).body.tfa_secret;

describe("randomness: secrets and codes come from node:crypto", () => {
  const tempDir = scratchFolders("tfa");

  it("after a restart with --data-dir, new secrets differ from the first run's and never take over another user's challenge", async () => {
    const dataDir = tempDir();
    const first = await TfaHarness.start({ dataDir });
    const alice = first.newUser({ email: "alice@tfa.test" });
    // A user with no methods authorizes by email; the pending challenge waits for its PUT.
    const aliceStart = await first.call("POST", "/api/v0/tfa/authorize-new-method/", { key: alice.key, body: {} });
    const aliceCode = await first.lastCode("alice@tfa.test");
    const aliceTotp = (await first.call("POST", "/api/v0/tfa/totp-setup/", { key: alice.key, body: {} })).body.secret;
    await first.close();

    const second = await TfaHarness.start({ dataDir });
    try {
      const bob = second.newUser({ email: "bob@tfa.test" });
      const bobStart = await second.call("POST", "/api/v0/tfa/authorize-new-method/", { key: bob.key, body: {} });
      const bobTotp = (await second.call("POST", "/api/v0/tfa/totp-setup/", { key: bob.key, body: {} })).body.secret;
      expect(bobStart.body.secret).not.toBe(aliceStart.body.secret);
      expect(bobTotp).not.toBe(aliceTotp);
      // Alice's challenge is still hers.
      const confirm = await second.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: alice.key, body: { code: aliceCode, secret: aliceStart.body.secret } });
      expect(confirm.status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("a challenge secret that already exists is refused, never overwritten (domain)", () => {
    const clock = new Clock("frozen");
    const accounts = new Accounts(() => clock.now());
    // A generator that always draws the same: every secret collides.
    const stuck = new (class extends Random {
      override next(): number {
        return 0;
      }
    })(0);
    const tfa = new Tfa({ accounts, clock, random: stuck });
    const alice = accounts.addUser({ email: "a@tfa.test" });
    const bob = accounts.addUser({ email: "b@tfa.test" });
    const secret = tfa.beginLogin(alice);
    expect(() => tfa.beginLogin(bob)).toThrow(expect.objectContaining({ code: "challenge_creation_failed" }));
    expect(tfa.caller(undefined, secret).id).toBe(alice.id);
  });
});

describe("legacy migration happens only after verification", () => {
  it("a wrong code, or a code sent to another number than the one on file, migrates nothing", async () => {
    const u = h.newUser();
    const onFile = h.newPhone();
    await h.setFlags(u, { phone_number: onFile, legacy_tfa: true });
    const proof = await h.smsCode(u);
    const refused = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", secret: proof.secret, code: wrong(proof.code) } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("2fa_verification_failed");
    expect(refused.body).not.toHaveProperty("fail_count");
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("legacy");
    expect((await h.status(u)).methods).toEqual([]);

    const elsewhere = await h.smsCode(u, { phone_number: h.newPhone() });
    const mismatch = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", ...elsewhere } });
    expect(mismatch.body.error).toBe("phone_number_mismatch");
    expect((await h.status(u)).methods).toEqual([]);

    const ok = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "sms", ...proof } });
    expect(ok.status).toBe(200);
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).body.tfa_status).toBe("enabled");
  });
});

describe(`codes without a method row are voided after ${MAX_FAILED_ATTEMPTS} wrong guesses`, () => {
  it("email: each wrong guess is the spec's wrong-code answer; then the challenge is gone (challenge_not_found)", async () => {
    const u = h.newUser();
    await h.addTotp(u);
    const { secret } = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    const code = await h.lastCode(u.user.email);
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) {
      const res = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code: wrong(code), secret } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("2fa_login_failed");
      expect(res.body).not.toHaveProperty("fail_count");
    }
    const after = await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "email", code, secret } });
    expect(after.status).toBe(400);
    expect(after.body.error).toBe("challenge_not_found");
  });

  it("legacy SMS (no method row) too; fewer failures leave the code usable", async () => {
    const u = h.newUser();
    await h.setFlags(u, { phone_number: h.newPhone(), legacy_tfa: true });
    const kept = await h.smsCode(u);
    for (let i = 1; i < MAX_FAILED_ATTEMPTS; i++) {
      expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { secret: kept.secret, code: wrong(kept.code) } })).body.error).toBe("2fa_login_failed");
    }
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: kept })).status).toBe(200);

    h.advance(CHALLENGE_TTL_MS);
    const guessed = await h.smsCode(u);
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) {
      const res = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { secret: guessed.secret, code: wrong(guessed.code) } });
      expect(res.body.error).toBe("2fa_verification_failed");
    }
    expect((await h.call("POST", "/api/v0/tfa/", { key: u.key, body: guessed })).body.error).toBe("challenge_not_found");
  });

  it("the code that adds an SMS method too", async () => {
    const u = h.newUser();
    await h.authorize(u);
    const to = h.newPhone();
    const { secret, code } = await h.smsCode(u, { phone_number: to });
    const body = { tfa_method: "sms", secret, phone_number: to };
    for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) {
      expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { ...body, code: wrong(code) } })).body.error).toBe("2fa_verification_failed");
    }
    expect((await h.call("POST", "/api/v0/tfa/confirm-new/", { key: u.key, body: { ...body, code } })).body.error).toBe("challenge_not_found");
  });
});

describe("sessions", () => {
  it("a scoped key plus a second factor gets a session with that key's permissions, not full access", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const scoped = h.emu.marketplace.accounts.issueKey(u.user.id, { permissions: { api: { user_write: {} } } }).key;
    const res = await h.call("POST", "/api/v0/tfa/", { key: scoped, body: { tfa_method: "totp", code: h.freshTotp(secret) } });
    expect(res.status).toBe(200);
    const denied = await h.call("GET", "/api/v0/users/current/", { key: res.body.session_key });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe("permission_denied");
  });

  it("the browser login's cookie is accepted as the session, with full access", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const res = await http(h.emu.url, "POST", "/api/v0/tfa/", { body: { tfa_method: "totp", code: h.freshTotp(secret), secret: await loginSecret(u) } });
    expect(res.status).toBe(200);
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(new RegExp(`Max-Age=${SESSION_TTL_MS / 1000}`));
    const headers = { cookie: cookie.split(";")[0] };
    const me = await http(h.emu.url, "GET", "/api/v0/users/current/", { headers });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(u.user.id);
    expect((await http(h.emu.url, "GET", "/api/v0/users/me/invoices/", { headers })).status).toBe(200);
    // A header key still wins over the cookie.
    expect((await http(h.emu.url, "GET", "/api/v0/users/current/", { key: h.emu.apiKey, headers })).body.id).toBe(h.emu.marketplace.seededUser.id);
  });

  it(`sessions expire after ${SESSION_TTL_MS / 3_600_000} h on the emulator clock (auth_error); API keys do not`, async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const session = (await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } })).body.session_key;
    h.advance(SESSION_TTL_MS - 1);
    expect((await h.call("GET", "/api/v0/users/current/", { key: session })).status).toBe(200);
    h.advance(1);
    const expired = await h.call("GET", "/api/v0/users/current/", { key: session });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe("auth_error");
    const tfaExpired = await h.call("GET", "/api/v0/tfa/status/", { key: session });
    expect(tfaExpired.status).toBe(403);
    expect(tfaExpired.body.error).toBe("auth_error");
    expect((await h.call("GET", "/api/v0/users/current/", { key: u.key })).status).toBe(200);
  });

  it("sessions are not listed among the user's API keys", async () => {
    const u = h.newUser();
    const { secret } = await h.addTotp(u);
    const session = (await h.call("POST", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } })).body.session_key;
    const list = await h.call("GET", "/api/v0/auth/apikeys/", { key: session });
    expect(list.status).toBe(200);
    expect(list.body.apikeys.map((k: { name: string }) => k.name)).toEqual(["test"]);
  });
});

describe("the saved state", () => {
  it("purges challenges expired long ago when new ones are made, and drops spent backup codes as old", async () => {
    const u = h.newUser();
    const { backupCodes } = await h.addTotp(u);
    const old = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body.secret;
    await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { backup_code: backupCodes![0] } });
    const ofUser = () => savedTfa(h).backupCodes.filter((c) => c.userId === u.user.id);
    expect(ofUser()).toHaveLength(20);

    h.advance(CHALLENGE_TTL_MS + PURGE_AFTER_MS - 1);
    await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} });
    expect(savedTfa(h).challenges.map((c) => c.secret)).toContain(old);
    h.advance(1);
    await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} });
    expect(savedTfa(h).challenges.map((c) => c.secret)).not.toContain(old);

    // The ten replaced codes were soft-deleted more than PURGE_AFTER_MS ago: the next generation drops them.
    const { secret } = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    const regen = await h.call("PUT", "/api/v0/tfa/regen-backup-codes/", { key: u.key, body: { tfa_method: "email", secret, code: await h.lastCode(u.user.email) } });
    expect(regen.status).toBe(200);
    expect(ofUser()).toHaveLength(20);
    expect(ofUser().filter((c) => c.deletedAt === null)).toHaveLength(10);
  });

  it("keeps the outbox out (memory only) and challenge codes as SHA-256 hashes only", async () => {
    const u = h.newUser();
    const { secret } = (await h.call("POST", "/api/v0/tfa/email/", { key: u.key, body: {} })).body;
    const code = await h.lastCode(u.user.email);
    const saved = savedTfa(h);
    expect(saved).not.toHaveProperty("outbox");
    const challenge = saved.challenges.find((c) => c.secret === secret) as unknown as Record<string, unknown>;
    expect(challenge).not.toHaveProperty("code");
    expect(challenge.codeHash).toBe(createHash("sha256").update(code).digest("hex"));
  });
});
