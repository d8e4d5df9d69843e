import type { Caller } from "./call";
import { foundOrNull, NotFoundError } from "./errors";
import {
  CreateSubaccountResponse, Subaccount, SubaccountsResponse, TeamDeleteResponse, TeamMember, TeamMembersResponse, TeamMessageResponse, PermissionSet,
  TeamRole, TeamRoleCreateResponse, TeamRolesResponse, TeamRoleUpdateResponse, TeamStatusResponse,
} from "./schemas";

/**
 * Teams as the service has them: the key that creates a team makes its account the team (one team an account),
 * with roles (permission objects by category) and members invited by email. The namespaces below are
 * `client.teams`, `client.teamRoles`, `client.teamMembers` and `client.subaccounts`.
 */

/** `client.teams`: makes this key's account a team (`transferCredit` moves credit into it), or ends the team. */
export function teamsApi(client: Caller) {
  return {
    create: async (name: string, options: { transferCredit?: number } = {}): Promise<void> => {
      const body = { team_name: name, ...(options.transferCredit !== undefined && { transfer_credit: options.transferCredit }) };
      await client.call({ method: "POST", path: "/api/v0/team/", body, schema: TeamMessageResponse });
    },
    /** Only the team's own key may; members' keys stop working. */
    destroy: async (): Promise<void> => {
      await client.call({ method: "DELETE", path: "/api/v0/team/", schema: TeamDeleteResponse, idempotent: true });
    },
  };
}

/** `client.teamRoles`: the team's roles; `get` answers null for a role the team does not have. A role is named in paths by name, changed by id. */
export function teamRolesApi(client: Caller) {
  const byName = (name: string) => `/api/v0/team/roles/${encodeURIComponent(name)}/`;
  return {
    create: async (name: string, permissions: PermissionSet): Promise<void> => {
      await client.call({ method: "POST", path: "/api/v0/team/roles/", body: { name, permissions }, schema: TeamRoleCreateResponse });
    },
    /** Every role but the owner's (the service leaves it out). */
    list: (): Promise<TeamRole[]> => client.call({ method: "GET", path: "/api/v0/team/roles-full/", schema: TeamRolesResponse }),
    get: (name: string): Promise<TeamRole | null> => foundOrNull(() => client.call({ method: "GET", path: byName(name), schema: TeamRole })),
    /**
     * Renames it, or sets its permissions, or both. The vendor's description asks for both in every change: what is
     * not changed is sent as the role has it now (docs/service-facts.md#teams-and-subaccounts).
     */
    update: async (id: number, change: { name?: string; permissions?: PermissionSet }): Promise<void> => {
      const body = change.name !== undefined && change.permissions !== undefined ? change : await wholeRoleChange(client, id, change);
      await client.call({ method: "PUT", path: `/api/v0/team/roles/${id}/`, body, schema: TeamRoleUpdateResponse, idempotent: true });
    },
    delete: async (name: string): Promise<void> => {
      await client.call({ method: "DELETE", path: byName(name), schema: TeamStatusResponse, idempotent: true });
    },
  };
}

/** `client.teamMembers`: invitations by email (the invitee needs an account, and accepts within 4 hours), the members, removal by user id. */
export function teamMembersApi(client: Caller) {
  return {
    /** Sent in the body, as the vendor describes it (the public client sends the query; the service takes both). */
    invite: async (email: string, role: string): Promise<void> => {
      await client.call({ method: "POST", path: "/api/v0/team/invite/", body: { email, role }, schema: TeamMessageResponse });
    },
    /** The owner first, then the members who accepted; each with its role(s). */
    list: (): Promise<TeamMember[]> => client.call({ method: "GET", path: "/api/v0/team/members/", schema: TeamMembersResponse }),
    remove: async (userId: number): Promise<void> => {
      await client.call({ method: "DELETE", path: `/api/v0/team/members/${userId}/`, schema: TeamStatusResponse, idempotent: true });
    },
  };
}

/** `client.subaccounts`: accounts whose parent is this one. The service has no call that deletes one. */
export function subaccountsApi(client: Caller) {
  return {
    create: async (account: { email: string; username: string; password: string; hostOnly?: boolean }): Promise<{ id: number; keyId: number | null }> => {
      const body = { email: account.email, username: account.username, password: account.password, host_only: account.hostOnly ?? false, parent_id: "me" };
      const made = await client.call({ method: "POST", path: "/api/v0/users/", body, schema: CreateSubaccountResponse });
      return { id: made.id, keyId: made.key_id ?? null };
    },
    list: async (): Promise<Subaccount[]> => (await client.call({ method: "GET", path: "/api/v0/subaccounts/?owner=me", schema: SubaccountsResponse })).users,
  };
}

/** A role's change with its name and permissions both: what the change leaves out, as the role has it now. */
async function wholeRoleChange(client: Caller, id: number, change: { name?: string; permissions?: PermissionSet }) {
  const role = (await client.call({ method: "GET", path: "/api/v0/team/roles-full/", schema: TeamRolesResponse })).find((r) => r.id === id);
  if (!role) throw new NotFoundError(`The team has no role ${id} (the owner's role cannot be changed): list them (client.teamRoles.list()).`);
  return { name: change.name ?? role.name, permissions: change.permissions ?? role.permissions };
}
