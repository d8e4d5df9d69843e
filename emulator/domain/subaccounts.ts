import type { Accounts } from "./accounts";
import { badRequest, ServiceError } from "./errors";
import type { UserRecord } from "./records";

/** The vendor's rule for a subaccount's email: an address, not the service's own domain. */
const EMAIL = /^(?!.*@vast)[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$/;

/**
 * Subaccounts (`POST /api/v0/users/`, `GET /api/v0/subaccounts`): accounts of their own whose parent is the caller,
 * each with a full-access key. The service has no call that deletes one. The password is checked for presence and
 * then dropped: the emulator has no password login, and keeps no secret it does not use.
 */
export const subaccounts = {
  create(accounts: Accounts, parent: UserRecord, fields: { email?: string; username?: string; password?: string; host_only?: boolean }): { user: UserRecord; keyId: number } {
    const email = fields.email ?? "";
    if (!EMAIL.test(email) || email.length > 64) throw badRequest("invalid_email", "Email address not allowed");
    if (!fields.password) throw badRequest("missing_auth_value", "A password is required.");
    if (!fields.username || fields.username.length > 64) throw badRequest("invalid_request", "A username of at most 64 characters is required.");
    if (accounts.allUsers().some((user) => user.email.toLowerCase() === email.toLowerCase())) {
      throw new ServiceError("conflict", "user_exists", "user already exists.");
    }
    const user = accounts.addUser({ email, username: fields.username, credit: 0, parentId: parent.id, ...(fields.host_only && { hostOnly: true }) });
    const key = accounts.issueKey(user.id, { name: "subaccount" });
    return { user, keyId: key.id };
  },

  of(accounts: Accounts, parent: UserRecord): UserRecord[] {
    return accounts.allUsers().filter((user) => user.parentId === parent.id);
  },
};
