import { badRequest } from "./errors";
import type { UserRecord } from "./records";

/**
 * Changes an account makes to itself and its credit (docs/service-facts.md#account-changes): moving credit to
 * another account (`transfer credit`), and its own details (`set user`). Each checks everything before it
 * changes anything.
 */

/** The least the service moves. */
const MIN_TRANSFER = 0.01;

/** Moves `amount` of `sender`'s credit to the account `recipient` names (its email, or its id). */
export function transferCredit(sender: UserRecord, recipientText: string, amount: number, users: () => UserRecord[]): UserRecord {
  if (!(amount >= MIN_TRANSFER) || !Number.isFinite(amount)) throw badRequest("invalid_args", `Invalid amount: at least ${MIN_TRANSFER} dollars.`);
  const text = recipientText.trim();
  const recipient = users().find((u) => u.email.toLowerCase() === text.toLowerCase() || (/^\d+$/.test(text) && u.id === Number(text)));
  if (!recipient) throw badRequest("invalid_recipient", `No account is ${JSON.stringify(text.slice(0, 80))}: give the recipient's email or user id.`);
  if (recipient.id === sender.id) throw badRequest("invalid_recipient", "The recipient is this account itself.");
  if (amount > sender.credit) throw badRequest("insufficient_balance", `Insufficient balance: the credit is ${sender.credit.toFixed(2)}.`);
  sender.credit -= amount;
  recipient.credit += amount;
  return recipient;
}

/** The fields `PUT /api/v0/users/` takes (the public client's list), and how long each may be. */
const SETTABLE: Record<string, number> = {
  ssh_key: 4096, paypal_email: 254, wise_email: 254, email: 254, normalized_email: 254, username: 64, fullname: 128,
  billaddress_line1: 256, billaddress_line2: 256, billaddress_city: 128, billaddress_zip: 32, billaddress_country: 64,
  billaddress_taxinfo: 128, balance_threshold_enabled: 8, balance_threshold: 32, autobill_threshold: 32, phone_number: 32,
};

/** Applies `PUT /api/v0/users/`: every field checked first (the service's error codes), then all set at once. */
export function setUser(user: UserRecord, fields: Record<string, unknown>): void {
  const entries = Object.entries(fields).filter(([key]) => key !== "client_id" && key !== "api_key");
  if (!entries.length) throw badRequest("missing_input", "Nothing to set: send at least one field.");
  const values: [string, string][] = [];
  for (const [key, value] of entries) {
    if (!(key in SETTABLE)) throw badRequest("nonexistent_key", `${key.slice(0, 60)} is not a field a user sets (${Object.keys(SETTABLE).join(", ")}).`);
    const text = value === null || value === undefined ? "" : String(value);
    if (!text.trim() && ["email", "username", "fullname"].includes(key)) throw badRequest("empty_input", `${key} cannot be empty.`);
    if (text.length > SETTABLE[key]) throw badRequest("input_too_long", `${key} is longer than ${SETTABLE[key]} characters.`);
    // eslint-disable-next-line no-control-regex -- control characters are what is refused
    if (/[\u0000-\u001f\u007f<>]/.test(key === "ssh_key" ? text.replace(/\n/g, "") : text)) throw badRequest("invalid_characters", `${key} has control characters or angle brackets.`);
    if (key.endsWith("email") && text && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(text)) throw badRequest("invalid_characters", `${key} is not an email address.`);
    values.push([key, text]);
  }
  for (const [key, text] of values) {
    if (key === "username") user.username = text;
    else if (key === "fullname") user.fullName = text;
    else if (key === "email") user.email = text;
    else if (key === "phone_number") user.phoneNumber = text;
    else (user.settings ??= {})[key] = text;
  }
}
