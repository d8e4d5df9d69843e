import { authenticator } from "otplib";
import {
  BadRequestError,
  GpuRentalClient,
  authorizeNewMethod,
  base32Decode,
  base32Encode,
  completeTfaLogin,
  confirmAuthorization,
  confirmNewMethod,
  hotp,
  loginWith2fa,
  regenerateBackupCodes,
  removeTfaMethod,
  sendSmsCode,
  setupTotp,
  tfaStatus,
  totp,
  updateTfaMethod,
} from "../../sdk";
import { Accounts } from "../../emulator/domain/accounts";
import { Clock } from "../../emulator/domain/clock";
import { Random } from "../../emulator/domain/random";
import { Tfa } from "../../emulator/domain/tfa";
import { TfaHarness, TfaUser } from "../helpers/tfa";

describe("TOTP (RFC 6238) written with node:crypto", () => {
  // RFC 6238 Appendix B: the seeds are ASCII, 20/32/64 bytes for SHA1/SHA256/SHA512, 8 digits, 30 s steps.
  const seed = (length: number) => base32Encode(Buffer.from("1234567890".repeat(7).slice(0, length), "ascii"));
  const VECTORS: [number, string, string, string][] = [
    [59, "94287082", "46119246", "90693936"],
    [1111111109, "07081804", "68084774", "25091201"],
    [1111111111, "14050471", "67062674", "99943326"],
    [1234567890, "89005924", "91819424", "93441116"],
    [2000000000, "69279037", "90698825", "38618901"],
    [20000000000, "65353130", "77737706", "47863826"],
  ];
  it.each(VECTORS)("at %i s gives the RFC's codes", (time, sha1, sha256, sha512) => {
    expect(totp(seed(20), time * 1000, { digits: 8 })).toBe(sha1);
    expect(totp(seed(32), time * 1000, { digits: 8, algorithm: "sha256" })).toBe(sha256);
    expect(totp(seed(64), time * 1000, { digits: 8, algorithm: "sha512" })).toBe(sha512);
  });

  it("HOTP matches RFC 4226 Appendix D", () => {
    const key = Buffer.from("12345678901234567890", "ascii");
    const expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
    expect(expected.map((_, counter) => hotp(key, counter))).toEqual(expected);
  });

  it("base32 follows RFC 4648 and round-trips", () => {
    const cases: [string, string][] = [["", ""], ["f", "MY"], ["fo", "MZXQ"], ["foo", "MZXW6"], ["foob", "MZXW6YQ"], ["fooba", "MZXW6YTB"], ["foobar", "MZXW6YTBOI"]];
    for (const [plain, encoded] of cases) {
      expect(base32Encode(Buffer.from(plain))).toBe(encoded);
      expect(base32Decode(encoded).toString()).toBe(plain);
    }
    expect(base32Decode("mzxw 6ytb oi======").toString()).toBe("foobar");
    expect(() => base32Decode("MZ1")).toThrow();
  });

  it("agrees with an independent library (otplib) both ways", () => {
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    try {
      for (const time of [0, 59_000, 1_767_225_600_000, 1_767_225_629_999, 1_767_225_630_000, 2_000_000_000_000]) {
        authenticator.options = { epoch: time };
        expect(totp(secret, time)).toBe(authenticator.generate(secret));
        expect(authenticator.check(totp(secret, time), secret)).toBe(true);
      }
    } finally {
      authenticator.resetOptions();
    }
  });
});

describe("SDK 2FA functions against the emulator", () => {
  let h: TfaHarness;
  let u: TfaUser;
  let client: GpuRentalClient;
  const clientOf = (key: string) => new GpuRentalClient({ apiUrl: h.emu.url, apiKey: key, retries: 0 });

  beforeAll(async () => {
    h = await TfaHarness.start();
    u = h.newUser();
    client = clientOf(u.key);
  });
  afterAll(() => h.close());

  it("sets up TOTP through the add-method flow and validates every answer", async () => {
    expect(await tfaStatus(client)).toMatchObject({ tfa_enabled: false, methods: [] });
    const start = await authorizeNewMethod(client);
    await confirmAuthorization(client, { code: await h.lastCode(u.user.email), secret: start.secret! });
    const { secret } = await setupTotp(client);
    const added = await confirmNewMethod(client, { tfa_method: "totp", code: totp(secret, h.now()), secret, label: "Phone app" });
    expect(added.backup_codes).toHaveLength(10);
    const status = await tfaStatus(client);
    expect(status.methods).toEqual([expect.objectContaining({ method: "totp", label: "Phone app" })]);
    const updated = await updateTfaMethod(client, { tfa_method: "totp", label: "Renamed" });
    expect(updated.method.label).toBe("Renamed");

    // loginWith2fa by TOTP: the session key works as a bearer.
    h.advance(30_000);
    const session = await loginWith2fa(client, { method: "totp", code: () => totp(secret, h.now()) });
    expect(session.user.id).toBe(u.user.id);
    expect((await clientOf(session.sessionKey).currentUser()).id).toBe(u.user.id);

    // By backup code.
    const byBackup = await loginWith2fa(client, { method: "backup", backupCode: added.backup_codes![0] });
    expect(byBackup.backupCodesRemaining).toBe(9);

    const regen = await regenerateBackupCodes(client, { backup_code: added.backup_codes![1] });
    expect(regen.backup_codes).toHaveLength(10);
  });

  it("loginWith2fa by SMS and email reads the code once sent", async () => {
    const to = "+14155553100";
    const sms = h.newUser();
    const smsClient = clientOf(sms.key);
    await h.addSms(sms, to);
    h.advance(10 * 60_000);
    const bySms = await loginWith2fa(smsClient, { method: "sms", code: async ({ secret }) => {
      expect(secret).toEqual(expect.any(String));
      return h.lastCode(to);
    } });
    expect(bySms.sessionKey).toEqual(expect.any(String));
    // A code still live makes the workflow resend instead (after the resend interval).
    await sendSmsCode(smsClient, { phone_number: to });
    h.advance(30_000);
    const again = await loginWith2fa(smsClient, { method: "sms", code: () => h.lastCode(to) });
    expect(again.sessionKey).not.toBe(bySms.sessionKey);
    const byEmail = await loginWith2fa(smsClient, { method: "email", code: () => h.lastCode(sms.user.email) });
    expect(byEmail.user.email).toBe(sms.user.email);
  });

  it("refuses a bad request before sending it, and maps 2FA errors to typed errors with their code", async () => {
    await expect(completeTfaLogin(client, { tfa_method: "totp", code: "12" })).rejects.toMatchObject({ name: "BadRequestError", code: "bad_request" });
    const error = await completeTfaLogin(client, { tfa_method: "totp", code: "000000" }).catch((e) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400, code: "2fa_login_failed" });
    const remove = await removeTfaMethod(client, { backup_code: "AAAA-BBBB-CCCC", target_id: 1 }).catch((e) => e);
    expect(remove).toMatchObject({ status: 401, code: "invalid_backup_code" });
  });
});

describe("persistence", () => {
  it("a snapshot restores into a fresh Tfa that behaves the same", () => {
    const clock = new Clock("frozen");
    const accounts = new Accounts(() => clock.now());
    const user = accounts.addUser({ email: "p@tfa.test" });
    const tfa = new Tfa({ accounts, clock, random: new Random(2) });
    tfa.authorizeNewMethod(user, {});
    const { secret } = tfa.totpSetup(user);
    tfa.confirmAuthorization(user, { code: tfa.outbox.latest(user.email)!.code, secret: tfa.snapshot().authorizations[0].pending!.secret });
    const { backupCodes } = tfa.confirmNewMethod(user, { tfa_method: "totp", code: totp(secret, clock.now()), secret });
    tfa.sendEmailCode(user);

    const data = JSON.parse(JSON.stringify(tfa.snapshot()));
    const copy = new Tfa({ accounts, clock, random: new Random(2) });
    copy.restore(data);
    expect(copy.snapshot()).toEqual(tfa.snapshot());
    expect(copy.status(user)).toEqual(tfa.status(user));
    // The outbox is a test aid in memory only: never saved, so not restored.
    expect(tfa.outbox.list()).toHaveLength(2);
    expect(copy.outbox.list()).toEqual([]);
    expect(copy.login(user, { backup_code: backupCodes![0] }, undefined).backupCodesRemaining).toBe(9);
    // The snapshot is a copy: changing the restored part leaves the original alone.
    expect(tfa.status(user).backupCodesRemaining).toBe(10);
  });
});
