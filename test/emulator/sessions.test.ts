import { Clock, startEmulator } from "../../emulator";
import { http } from "../helpers/emulator";
import { TfaHarness, TfaUser } from "../helpers/tfa";
import { scratchFolders } from "../helpers/paths";

/**
 * Sessions bound to their credentials (emulator/TFA.md, "Sessions"): a 2FA session dies with the key it was
 * opened with, with the method whose code opened it, and with 2FA itself; a revoked key stays revoked.
 */
let h: TfaHarness;
beforeAll(async () => {
  h = await TfaHarness.start();
});
afterAll(() => h.close());

const works = async (key: string) => (await h.call("GET", "/api/v0/users/current/", { key })).status;
const login = async (key: string | undefined, body: Record<string, unknown>) => {
  const res = await h.call("POST", "/api/v0/tfa/", { key, body });
  if (res.status !== 200) throw new Error(`login: ${JSON.stringify(res.body)}`);
  return res.body.session_key as string;
};
const newKey = async (u: TfaUser, name: string) => (await h.call("POST", "/api/v0/auth/apikeys/", { key: u.key, body: { name } })).body as { id: number; key: string };

it("ends every session opened with a deleted key at once, and the sessions those opened; others live on", async () => {
  const u = h.newUser();
  const { secret } = await h.addTotp(u);
  const ci = await newKey(u, "ci");
  const fromCi = await login(ci.key, { tfa_method: "totp", code: h.freshTotp(secret) });
  const fromSession = await login(fromCi, { tfa_method: "totp", code: h.freshTotp(secret) });
  const fromOther = await login(u.key, { tfa_method: "totp", code: h.freshTotp(secret) });
  expect([await works(fromCi), await works(fromSession), await works(fromOther)]).toEqual([200, 200, 200]);

  expect((await h.call("DELETE", `/api/v0/auth/apikeys/${ci.id}/`, { key: u.key })).status).toBe(200);
  for (const dead of [ci.key, fromCi, fromSession]) {
    expect(await works(dead)).toBe(401);
    expect((await h.call("POST", "/api/v0/auth/apikeys/", { key: dead, body: { name: "escalate" } })).status).toBe(401);
    expect((await h.call("GET", "/api/v0/tfa/status/", { key: dead })).body.error).toBe("auth_error");
  }
  expect(await works(fromOther)).toBe(200);
  expect(await works(u.key)).toBe(200);
});

it("ends the sessions a removed method's codes opened, and every session when 2FA goes off; keys stay", async () => {
  const u = h.newUser();
  const { secret } = await h.addTotp(u);
  const phone = h.newPhone();
  await h.authorize(u, { totpSecret: secret });
  const { methodId: smsId } = await h.addSms(u, phone);
  const bySms = await (async () => {
    const sent = await h.smsCode(u, { tfa_method_id: smsId });
    return login(u.key, { tfa_method: "sms", tfa_method_id: smsId, code: sent.code, secret: sent.secret });
  })();
  const byTotp = await login(u.key, { tfa_method: "totp", code: h.freshTotp(secret) });

  const removeSms = await h.call("DELETE", "/api/v0/tfa/", { key: byTotp, body: { tfa_method: "totp", code: h.freshTotp(secret), target_id: smsId } });
  expect(removeSms.status).toBe(200);
  expect([await works(bySms), await works(byTotp)]).toEqual([401, 200]);

  const removeLast = await h.call("DELETE", "/api/v0/tfa/", { key: u.key, body: { tfa_method: "totp", code: h.freshTotp(secret) } });
  expect(removeLast.status).toBe(200);
  expect((await h.status(u)).tfa_enabled).toBe(false);
  expect([await works(byTotp), await works(u.key)]).toEqual([401, 200]);
});

const sessionsDir = scratchFolders("sessions");

it("keeps a deleted key dead across restarts, the --api-key one included, and never gives its id again", async () => {
  const dataDir = sessionsDir();
  const first = await startEmulator({ dataDir, apiKey: "chosen-key-0001", clock: new Clock("frozen"), rateLimits: "off" });
  const made = (await http(first.url, "POST", "/api/v0/auth/apikeys/", { key: first.apiKey, body: { name: "other" } })).body;
  const seededId = (await http(first.url, "GET", "/api/v0/auth/apikeys/", { key: made.key })).body.apikeys.find((k: { name: string }) => k.name === "seeded").id;
  expect((await http(first.url, "DELETE", `/api/v0/auth/apikeys/${seededId}/`, { key: made.key })).status).toBe(200);
  expect((await http(first.url, "DELETE", `/api/v0/auth/apikeys/${made.id}/`, { key: made.key })).status).toBe(200);
  const user = (await http(first.url, "POST", "/_emulator/users", { body: { email: "after@gpu-rental.test" } })).body;
  await first.close();

  const second = await startEmulator({ dataDir, apiKey: "chosen-key-0001", clock: new Clock("frozen"), rateLimits: "off" });
  expect((await http(second.url, "GET", "/api/v0/users/current/", { key: "chosen-key-0001" })).status).toBe(401);
  expect((await http(second.url, "GET", "/api/v0/users/current/", { key: made.key })).status).toBe(401);
  const next = (await http(second.url, "POST", "/api/v0/auth/apikeys/", { key: user.api_key, body: { name: "next" } })).body;
  expect(next.id).toBeGreaterThan(made.id);
  await second.close();
});
