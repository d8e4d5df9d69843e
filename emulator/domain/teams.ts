import type { Accounts, IssuedKey } from "./accounts";
import { PERMISSIONS } from "./accounts";
import { badRequest, forbidden, notFound, ServiceError } from "./errors";
import type { ApiKeyRecord, Permissions, TeamRecord, TeamRoleRecord, UserRecord } from "./records";

/*
 * Teams (`/api/v0/team/...`), as the vendor describes them: the account whose key creates a team becomes the team
 * account (one team an account), with roles (permission objects) and members. A member works in the team with a
 * key issued on the team account whose permissions are its role's, read at each call (a changed role changes what
 * its members' keys may do). An invitation names an account that exists; the emulator's control API accepts it for
 * the invitee (the service sends a mail), which makes the member and gives their key.
 */

/** An invitation lasts 4 hours (the vendor's docs); the same one again within 5 minutes is refused (429). */
const INVITATION_MS = 4 * 3_600_000;
const REINVITE_MS = 300_000;

/** Every category: the owner's and the manager's roles. A member views, creates and uses instances. */
const ALL: NonNullable<Permissions> = { api: Object.fromEntries(PERMISSIONS.map((category) => [category, {}])) };
const MEMBER: NonNullable<Permissions> = { api: { misc: {}, user_read: {}, instance_read: {}, instance_write: {} } };

export const OWNER_ROLE = "owner";

export const teams = {
  /** The team of a team account, or 404 as the service answers a personal account. */
  of(user: UserRecord, what = "This account"): TeamRecord {
    if (!user.team) throw notFound("not_found", `${what} is not a team account: create a team first (POST /api/v0/team/).`);
    return user.team;
  },

  create(accounts: Accounts, owner: UserRecord, name: string, now: number): TeamRecord {
    if (owner.team) throw badRequest("invalid_args", `This account is the team ${owner.team.name} already: an account has one team.`);
    if (accounts.allUsers().some((user) => user.team?.name === name)) throw badRequest("invalid_args", "Team name already exists");
    const roles = [
      { id: 1, name: OWNER_ROLE, permissions: ALL },
      { id: 2, name: "manager", permissions: ALL },
      { id: 3, name: "member", permissions: MEMBER },
    ];
    owner.team = { name, createdAt: now, roles, members: [], invitations: [], nextRoleId: 4 };
    return owner.team;
  },

  /** Only the team's own key (not a member's) deletes it; members' keys in it are revoked. */
  destroy(accounts: Accounts, owner: UserRecord, key: ApiKeyRecord): void {
    teams.of(owner, "Cannot Delete Team. This account");
    if (key.teamRole !== undefined) throw forbidden("not_allowed", "Only the Team's Owner may delete the team");
    for (const member of accounts.keysOf(owner.id).filter((k) => k.teamRole !== undefined)) accounts.revokeKey(member);
    owner.team = undefined;
  },

  createRole(team: TeamRecord, name: string, permissions: unknown): TeamRoleRecord {
    if (team.roles.some((role) => role.name === name)) throw badRequest("invalid_args", `The team has a role ${name} already.`);
    const role = { id: team.nextRoleId++, name, permissions: checkedPermissions(permissions) };
    team.roles.push(role);
    return role;
  },

  /** A role by its name, as the service reads and deletes one. */
  role(team: TeamRecord, name: string): TeamRoleRecord {
    return found(team.roles.find((r) => r.name === name));
  },

  /** A role by its id (digits) or its name, as a change names one: the vendor names the parameter `name` and types it as the id. */
  roleToChange(team: TeamRecord, idOrName: string): TeamRoleRecord {
    return found(team.roles.find((r) => (/^\d+$/.test(idOrName) ? r.id === Number(idOrName) : r.name === idOrName)));
  },

  updateRole(team: TeamRecord, idOrName: string, change: { name?: string; permissions?: unknown }): TeamRoleRecord {
    const role = teams.roleToChange(team, idOrName);
    if (role.name === OWNER_ROLE) throw forbidden("forbidden", "You cannot change the owner role.");
    if (change.name !== undefined && change.name !== role.name) {
      if (team.roles.some((r) => r.name === change.name)) throw badRequest("invalid_args", `The team has a role ${change.name} already.`);
      for (const member of team.members) if (member.role === role.name) member.role = change.name;
      role.name = change.name;
    }
    if (change.permissions !== undefined) role.permissions = checkedPermissions(change.permissions);
    return role;
  },

  removeRole(team: TeamRecord, name: string): void {
    const role = teams.role(team, name);
    if (role.name === OWNER_ROLE) throw forbidden("forbidden", "You cannot delete the owner role.");
    const holders = team.members.filter((m) => m.role === role.name).length;
    if (holders) throw badRequest("invalid_args", `Role ${role.name} is held by ${holders} member(s): remove them or give them another role first.`);
    team.roles = team.roles.filter((r) => r !== role);
  },

  invite(accounts: Accounts, owner: UserRecord, email: string, roleName: string, now: number): void {
    const team = teams.of(owner);
    const invitee = accounts.allUsers().find((user) => user.email.toLowerCase() === email.toLowerCase());
    if (!invitee) throw notFound("not_found", `No account has the email ${email}: the invitee needs an account of the service first.`);
    if (invitee.id === owner.id) throw badRequest("invalid_args", "User cannot be invited to their own team.");
    if (team.members.some((m) => m.userId === invitee.id)) throw badRequest("invalid_args", "User is already a member of this team.");
    if (!team.roles.some((r) => r.name === roleName) || roleName === OWNER_ROLE) throw badRequest("invalid_args", `The team has no role ${roleName} to invite with.`);
    const sent = team.invitations.find((i) => i.email.toLowerCase() === email.toLowerCase() && now - i.sentAt < INVITATION_MS);
    if (sent && now - sent.sentAt < REINVITE_MS) {
      throw new ServiceError("rate_limited", "invitation_already_sent", `Error: invitation already sent to ${email} only ${Math.round((now - sent.sentAt) / 1000)} seconds ago.`);
    }
    team.invitations = [...team.invitations.filter((i) => i !== sent), { email, role: roleName, sentAt: now }];
  },

  /** The invitee accepts (the control API plays them): a member, with a key of theirs in the team. */
  accept(accounts: Accounts, owner: UserRecord, email: string, now: number): { member: UserRecord; key: IssuedKey } {
    const team = teams.of(owner);
    const invitation = team.invitations.find((i) => i.email.toLowerCase() === email.toLowerCase() && now - i.sentAt < INVITATION_MS);
    if (!invitation) throw notFound("not_found", `The team has no invitation for ${email} (or it expired: invitations last 4 hours).`);
    const member = accounts.allUsers().find((user) => user.email.toLowerCase() === email.toLowerCase())!;
    team.invitations = team.invitations.filter((i) => i !== invitation);
    team.members.push({ userId: member.id, role: invitation.role, joinedAt: now });
    const key = accounts.issueKey(owner.id, { name: `${member.email} in ${team.name}`, permissions: { api: {} }, teamRole: invitation.role, memberId: member.id });
    return { member, key };
  },

  /** The members, the owner first with the owner role. */
  members(accounts: Accounts, owner: UserRecord): { user: UserRecord; role: string }[] {
    const team = teams.of(owner);
    const listed = team.members.flatMap((m) => {
      const user = accounts.user(m.userId);
      return user ? [{ user, role: m.role }] : [];
    });
    return [{ user: owner, role: OWNER_ROLE }, ...listed];
  },

  removeMember(accounts: Accounts, owner: UserRecord, userId: number): void {
    const team = teams.of(owner);
    if (userId === owner.id) throw badRequest("invalid_args", "Cannot remove the team owner from the team");
    if (!team.members.some((m) => m.userId === userId)) throw notFound("not_found", "No user was removed from the team.");
    team.members = team.members.filter((m) => m.userId !== userId);
    for (const key of accounts.keysOf(owner.id).filter((k) => k.memberId === userId)) accounts.revokeKey(key);
  },
};

function found(role: TeamRoleRecord | undefined): TeamRoleRecord {
  if (!role) throw notFound("not_found", "Specified role not found");
  return role;
}

/** A role's permissions: `{api: {category: {...}}}` of known categories only. */
function checkedPermissions(permissions: unknown): NonNullable<Permissions> {
  if (permissions === undefined || permissions === null) throw badRequest("invalid_args", "Missing permissions parameter");
  const api = (permissions as { api?: unknown }).api;
  if (typeof permissions !== "object" || Array.isArray(permissions) || typeof api !== "object" || api === null || Array.isArray(api)) {
    throw badRequest("invalid_args", 'permissions must be an object of categories under "api": {"api": {"instance_read": {}}}.');
  }
  const unknown = Object.keys(api).filter((category) => !(PERMISSIONS as readonly string[]).includes(category));
  if (unknown.length) throw badRequest("invalid_args", `Unknown permission categories: ${unknown.join(", ")}. Known: ${PERMISSIONS.join(", ")}.`);
  return { api: api as Record<string, Record<string, unknown>> };
}
