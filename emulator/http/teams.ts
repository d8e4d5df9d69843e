import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  CreateSubaccountRequest, CreateSubaccountResponse, CreateTeamRequest, SubaccountsResponse, TeamDeleteResponse, TeamInviteRequest,
  TeamMembersResponse, TeamMessageResponse, TeamRole, TeamRoleCreateResponse, TeamRoleRequest, TeamRolesResponse, TeamRoleUpdateResponse,
  PermissionSet, TeamStatusResponse, UpdateTeamRoleRequest,
} from "../../sdk/schemas";
import { badRequest } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { subaccounts } from "../domain/subaccounts";
import { OWNER_ROLE, teams } from "../domain/teams";
import { accepting, optionalField } from "./accepting";
import { idParam, route } from "./routes";
import type { TeamRoleRecord } from "../domain/records";

/** A role as the service shows it: its permissions as objects by category (the vendor's docs). */
const roleView = (role: TeamRoleRecord) => ({ id: role.id, name: role.name, identifier: role.name, permissions: role.permissions });

/** The public client sends an invitation in the query, with `{}` as the body; the vendor describes a body. */
const InviteQuery = z.object({ email: z.string().optional(), role: z.string().optional() });

/**
 * Teams (`/api/v0/team/...`): a team, its roles and members, in the shapes of the vendor's description (bare arrays
 * for the listings, `{status, message}` for deletions, a bare JSON text for a role's change); and subaccounts.
 */
export function registerTeams(app: FastifyInstance, market: Marketplace): void {
  const { accounts } = market;

  route(app, market, {
    method: "POST",
    url: "/api/v0/team/",
    permission: "team_write",
    body: CreateTeamRequest,
    response: TeamMessageResponse,
    rules: "an account that is a team already, or a team name that exists",
    handler: ({ principal, body }) => {
      teams.create(accounts, principal.user, body.team_name, market.clock.now());
      return { success: true, msg: "Team Successfully Created!" };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/team/",
    permission: "team_write",
    refusals: ["not_found"],
    response: TeamDeleteResponse,
    handler: ({ principal }) => {
      teams.destroy(accounts, principal.user, principal.key);
      return { success: true, msg: "Team Successfully Deleted!", pkey_id: principal.key.id };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/team/roles/",
    permission: "team_write",
    refusals: ["not_found"],
    body: accepting(TeamRoleRequest, { fields: { permissions: PermissionSet } }),
    response: TeamRoleCreateResponse,
    rules: "a role name the team has, or a permission category that does not exist",
    handler: ({ principal, body }) => {
      teams.createRole(teams.of(principal.user), body.name, body.permissions);
      return { msg: "success" };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/team/roles-full/",
    permission: "team_read",
    refusals: ["not_found"],
    response: TeamRolesResponse,
    handler: ({ principal }) => teams.of(principal.user).roles.filter((role) => role.name !== OWNER_ROLE).map(roleView),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/team/roles/:name/",
    permission: "team_read",
    refusals: ["not_found"],
    response: TeamRole,
    handler: ({ principal, params }) => roleView(teams.role(teams.of(principal.user), params.name)),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/team/roles/:name/",
    permission: "team_write",
    refusals: ["not_found"],
    body: accepting(UpdateTeamRoleRequest, { fields: { permissions: optionalField(PermissionSet) } }),
    response: TeamRoleUpdateResponse,
    rules: "a new name another role has, or a permission category that does not exist",
    handler: ({ principal, params, body }) => `Successfully Updated Team Role For ${teams.updateRole(teams.of(principal.user), params.name, body).name}`,
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/team/roles/:name/",
    permission: "team_write",
    refusals: ["not_found"],
    response: TeamStatusResponse,
    rules: "a role that members hold",
    handler: ({ principal, params }) => {
      teams.removeRole(teams.of(principal.user), params.name);
      return { status: "success", message: "Role removed from team" };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/team/invite/",
    permission: "team_write",
    refusals: ["not_found", "rate_limited"],
    body: InviteQuery,
    query: InviteQuery,
    response: TeamMessageResponse,
    rules: "an invitee who is the owner or a member already, or a role the team does not have",
    handler: ({ principal, body, query }) => {
      const parsed = TeamInviteRequest.safeParse({ email: body?.email ?? query.email, role: body?.role ?? query.role });
      if (!parsed.success) throw badRequest("invalid_args", "An invitation needs the invitee's email and a role (in the body, or the query as the public client sends them).");
      teams.invite(accounts, principal.user, parsed.data.email, parsed.data.role, market.clock.now());
      return { success: true, msg: `New invitation sent to ${parsed.data.email}` };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/team/members/",
    permission: "team_read",
    refusals: ["not_found"],
    response: TeamMembersResponse,
    handler: ({ principal }) =>
      teams.members(accounts, principal.user).map(({ user, role }) => ({ id: user.id, username: user.username, email: user.email, fullname: user.fullName, roles: [role] })),
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/team/members/:id/",
    permission: "team_write",
    refusals: ["not_found"],
    response: TeamStatusResponse,
    rules: "the team's owner",
    handler: ({ principal, params }) => {
      teams.removeMember(accounts, principal.user, idParam(params, "id"));
      return { status: "success", message: "User removed from the team." };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/users/",
    permission: "user_write",
    refusals: ["conflict"],
    body: CreateSubaccountRequest,
    response: CreateSubaccountResponse,
    rules: "an email that is not an address, or of the service's own domain (invalid_email); no password (missing_auth_value)",
    handler: ({ principal, body }) => {
      const { user, keyId } = subaccounts.create(accounts, principal.user, body);
      return { id: user.id, username: user.username, email: user.email, key_id: keyId };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/subaccounts/",
    permission: "user_read",
    response: SubaccountsResponse,
    handler: ({ principal }) => ({
      users: subaccounts.of(accounts, principal.user).map((user) => ({
        id: user.id,
        parent_id: principal.user.id,
        key_id: accounts.keysOf(user.id)[0]?.id ?? null,
        created_at: new Date(user.createdAt ?? 0).toISOString(),
        deleted_at: null,
      })),
    }),
  });
}
