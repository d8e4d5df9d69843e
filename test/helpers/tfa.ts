import { totp } from "../../sdk/tfa";
import type { UserRecord } from "../../emulator/domain/records";
import { EmulatorOptions } from "../../emulator";
import { TestEmulator, emulator, http } from "./emulator";

export const MINUTE = 60_000;

export interface TfaUser {
  user: UserRecord;
  key: string;
}

/** An emulator plus the moves 2FA tests repeat: users, raw calls, codes from the outbox, methods set up. */
export class TfaHarness {
  private users = 0;
  private phones = 0;

  constructor(readonly emu: TestEmulator) {}

  static async start(options: EmulatorOptions = {}): Promise<TfaHarness> {
    return new TfaHarness(await emulator({ offers: 5, ...options }));
  }

  close(): Promise<void> {
    return this.emu.close();
  }

  /** A fresh user (verified email, no 2FA) with a full-access key. */
  newUser(fields: Partial<UserRecord> = {}): TfaUser {
    const n = ++this.users;
    const user = this.emu.marketplace.accounts.addUser({ email: `user${n}@tfa.test`, ...fields });
    return { user, key: this.emu.marketplace.accounts.issueKey(user.id, { name: "test" }).key };
  }

  /** A phone number no other call of this harness used (the phone cap counts across users). */
  newPhone(): string {
    return `+1415555${String(1000 + this.phones++).padStart(4, "0")}`;
  }

  call(method: string, path: string, options: { key?: string; body?: unknown; rawBody?: string } = {}) {
    return http(this.emu.url, method, path, options);
  }

  advance(ms: number): void {
    this.emu.marketplace.clock.advance(ms);
  }

  now(): number {
    return this.emu.marketplace.clock.now();
  }

  /** The code of the last message sent to `to`, read through the control API. */
  async lastCode(to: string): Promise<string> {
    const res = await this.call("GET", `/_emulator/outbox?to=${encodeURIComponent(to)}`);
    const last = res.body.messages.at(-1);
    if (!last) throw new Error(`nothing was sent to ${to}`);
    return last.code;
  }

  /** The TOTP code now, after stepping the clock past the last step used (a code is accepted once). */
  freshTotp(secret: string): string {
    this.advance(30_000);
    return totp(secret, this.now());
  }

  /** Grants the add-method window: by email when the user has no method, else by `via`. */
  async authorize(u: TfaUser, via: { tfa_method?: string; tfa_method_id?: number; totpSecret?: string; phone?: string } = {}): Promise<void> {
    const { totpSecret, phone, ...body } = via;
    const start = await this.call("POST", "/api/v0/tfa/authorize-new-method/", { key: u.key, body });
    if (start.status !== 200) throw new Error(`authorize: ${JSON.stringify(start.body)}`);
    const code = totpSecret ? this.freshTotp(totpSecret) : await this.lastCode(phone ?? u.user.email);
    const confirm = await this.call("PUT", "/api/v0/tfa/authorize-new-method/", { key: u.key, body: { code, secret: start.body.secret } });
    if (confirm.status !== 200) throw new Error(`authorize confirm: ${JSON.stringify(confirm.body)}`);
  }

  /** Adds a TOTP method (authorizing by email first when it is the first method). */
  async addTotp(u: TfaUser, label?: string): Promise<{ secret: string; methodId: number; backupCodes?: string[] }> {
    if (this.emu.marketplace.tfa.methodsOf(u.user).length === 0) await this.authorize(u);
    const setup = await this.call("POST", "/api/v0/tfa/totp-setup/", { key: u.key, body: {} });
    const secret: string = setup.body.secret;
    const res = await this.call("POST", "/api/v0/tfa/confirm-new/", {
      key: u.key,
      body: { tfa_method: "totp", code: totp(secret, this.now()), secret, label },
    });
    if (res.status !== 200) throw new Error(`confirm-new totp: ${JSON.stringify(res.body)}`);
    const methodId = this.emu.marketplace.tfa.methodsOf(u.user).find((m) => m.method === "totp")!.id;
    return { secret, methodId, backupCodes: res.body.backup_codes };
  }

  /** Adds an SMS method for `phone`; the window must be granted already unless it is the first method. */
  async addSms(u: TfaUser, phone: string, label?: string): Promise<{ methodId: number; backupCodes?: string[] }> {
    if (this.emu.marketplace.tfa.methodsOf(u.user).length === 0) await this.authorize(u);
    const sent = await this.call("POST", "/api/v0/tfa/sms/", { key: u.key, body: { phone_number: phone } });
    if (sent.status !== 200) throw new Error(`sms: ${JSON.stringify(sent.body)}`);
    const res = await this.call("POST", "/api/v0/tfa/confirm-new/", {
      key: u.key,
      body: { tfa_method: "sms", code: await this.lastCode(phone), secret: sent.body.secret, phone_number: phone, label },
    });
    if (res.status !== 200) throw new Error(`confirm-new sms: ${JSON.stringify(res.body)}`);
    const methodId = this.emu.marketplace.tfa.methodsOf(u.user).find((m) => m.phoneNumber === phone)!.id;
    return { methodId, backupCodes: res.body.backup_codes };
  }

  /** Sends an SMS code with a bearer; returns the secret and the code from the outbox. */
  async smsCode(u: TfaUser, body: Record<string, unknown> = {}): Promise<{ secret: string; code: string }> {
    const res = await this.call("POST", "/api/v0/tfa/sms/", { key: u.key, body });
    if (res.status !== 200) throw new Error(`sms: ${JSON.stringify(res.body)}`);
    const to = this.emu.marketplace.tfa.outbox.list({ channel: "sms" }).at(-1)!.to;
    return { secret: res.body.secret, code: await this.lastCode(to) };
  }

  async status(u: TfaUser) {
    return (await this.call("GET", "/api/v0/tfa/status/", { key: u.key })).body;
  }

  async setFlags(u: TfaUser, flags: Record<string, unknown>) {
    const res = await this.call("PUT", `/_emulator/users/${u.user.id}`, { body: flags });
    if (res.status !== 200) throw new Error(`flags: ${JSON.stringify(res.body)}`);
  }
}

/** A wrong code that is still 6 digits. */
export function wrong(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, "0");
}
