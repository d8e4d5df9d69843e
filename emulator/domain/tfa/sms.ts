import { ServiceError } from "../errors";
import { PREAUTH_PHONE_CAP, PREAUTH_PHONE_WINDOW_MS, SMS_RATE_LIMIT, SMS_RATE_WINDOW_MS } from "./constants";

/*
 * The emulated SMS provider: its refusals and the rate limits on sending. The log of sends is saved, so a
 * restart does not reset the limits.
 */

/**
 * Reserved phone numbers (in the style of an SMS provider's magic test numbers) that make the emulated
 * provider refuse, so clients can meet these errors deterministically.
 */
export const RESERVED_NUMBERS: Record<string, { kind: "bad_request" | "rate_limited"; code: string; msg: string }> = {
  "+15005550001": { kind: "bad_request", code: "twilio_error", msg: "SMS delivery failed: the number cannot receive SMS." },
  "+15005550004": { kind: "bad_request", code: "sms_blocked_number", msg: "This number is flagged as a high SMS-pumping risk; use another number." },
  "+15005550429": { kind: "rate_limited", code: "twilio_rate_limited", msg: "The SMS provider is rate limiting; retry later." },
};

export interface SmsSend {
  userId: number;
  phoneNumber: string;
  at: number;
  /** Sent to a number that is none of the user's (a method being added): counts toward the phone cap. */
  preauth: boolean;
}

export class SmsLog {
  private sends: SmsSend[] = [];

  /** Refuses a send over the user's rate, over the cap of a number being added, or to a reserved number. */
  admit(send: SmsSend): void {
    // Sends older than every window count toward nothing: dropped so the log stays bounded.
    this.sends = this.sends.filter((s) => s.at > send.at - Math.max(SMS_RATE_WINDOW_MS, PREAUTH_PHONE_WINDOW_MS));
    if (this.sends.filter((s) => s.userId === send.userId && s.at > send.at - SMS_RATE_WINDOW_MS).length >= SMS_RATE_LIMIT) {
      throw new ServiceError("rate_limited", "sms_rate_limited", "Too many SMS codes requested; try again later.");
    }
    if (send.preauth && this.sends.filter((s) => s.preauth && s.phoneNumber === send.phoneNumber).length >= PREAUTH_PHONE_CAP) {
      throw new ServiceError("rate_limited", "preauth_phone_cap", "This phone number was used in too many authorization attempts.");
    }
    const refusal = RESERVED_NUMBERS[send.phoneNumber];
    if (refusal) throw new ServiceError(refusal.kind, refusal.code, refusal.msg);
  }

  record(send: SmsSend): void {
    this.sends.push(send);
  }

  // ---- persistence ----

  save(): SmsSend[] {
    return this.sends;
  }

  load(sends: SmsSend[]): void {
    this.sends = sends;
  }
}
