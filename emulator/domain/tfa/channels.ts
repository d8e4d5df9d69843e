import { badRequest } from "../errors";

/** A way to prove the second factor: a stored method (SMS, TOTP) or a code sent by email. */
export type Channel = "sms" | "totp" | "email";
/** The channels stored as method rows: email never is. */
export type MethodType = "sms" | "totp";

/** `sms`, `totp` or `email`; anything else is `invalid_tfa_method`. */
export function channelOf(name: string): Channel {
  if (name === "sms" || name === "totp" || name === "email") return name;
  throw badRequest("invalid_tfa_method", `Unsupported tfa_method ${JSON.stringify(name)}: use sms, totp or email.`);
}

/** A stored method type: email is never stored as a method. */
export function methodType(name: string): MethodType {
  const channel = channelOf(name);
  if (channel === "email") throw badRequest("invalid_tfa_method", "email is not a stored method: use sms or totp.");
  return channel;
}
