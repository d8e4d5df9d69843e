import { z } from "zod";
import { canonicalJson, deletedOrGone, GpuRentalError, NotFoundError, PermissionSet, TeamRole } from "../../sdk";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";
import { ofTheTeam } from "./team";

/**
 * The TeamRole kind: a role of the team the account is (`/api/v0/team/roles/`): the permission categories its
 * members' keys may use. Its id is the service's role id, which a rename keeps: the name and the permissions change
 * in place. The service reads and deletes a role by name, and changes it by id.
 */

const DESCRIPTION =
  "A role of the account's team (the account must be a team: a `Team`, in this stack or made by hand): the permission categories " +
  "the keys of the members who hold it may use, read by the service at each call. Its name and permissions change in place, and " +
  "its members keep it. Declaring a name the team has already takes that role over, its permissions set to the declared ones " +
  "(preview says so). Destroy removes it; the service refuses while members hold it.";

const TeamRoleSpec = z.object({
  name: z
    .string()
    .min(1)
    .refine((name) => name !== "owner", "owner is the team's own role: name the role otherwise")
    .meta({ description: "The role's name in the team (not `owner`, the team's own)." }),
  permissions: PermissionSet.meta({
    tsType: "PermissionSet",
    description:
      "`{ api: { instance_read: {}, instance_write: {} } }`: the categories its members may use, each an object (its scopes, often " +
      "empty). Categories: misc, user_read, user_write, instance_read, instance_write, billing, team_read, team_write.",
  }),
});
export type TeamRoleSpec = z.infer<typeof TeamRoleSpec>;

const TeamRoleOutputs = z.object({ roleId: z.int().meta({ description: "The role's id in the team (also the resource's id)." }) });
export type TeamRoleOutputs = z.infer<typeof TeamRoleOutputs>;

export const TEAM_ROLE: Kind<TeamRoleSpec, TeamRoleOutputs> = {
  description: describeResource({ name: "TeamRole", description: DESCRIPTION, inputs: TeamRoleSpec, outputs: TeamRoleOutputs }),
  spec: specOf("TeamRole", TeamRoleSpec),
  diff: diffTeamRole,
  create: createTeamRole,
  adopt: adoptTeamRole,
  read: readTeamRole,
  import: importTeamRole,
  update: updateTeamRole,
  delete: deleteTeamRole,
  warnings: teamRoleWarnings,
};

/** Nothing replaces a role: a new name or new permissions are changed in place. */
function diffTeamRole(olds: Props, news: Props, unknown?: unknown) {
  const updates = (["name", "permissions"] as const).filter((key) => (unknown !== undefined && news[key] === unknown) || canonicalJson(olds[key]) !== canonicalJson(news[key]));
  return { changes: updates.length > 0, replaces: [], updates, deleteBeforeReplace: false };
}

/** Creates the role, or takes over the team's role of that name (a cut-off run's, or one made by hand). */
async function createTeamRole(spec: TeamRoleSpec, op: Operation): Promise<{ id: string; outs: TeamRoleSpec & TeamRoleOutputs }> {
  const existing = await op.client.teamRoles.get(spec.name);
  if (existing) {
    op.log(`the team has a role ${spec.name} already (role ${existing.id}): taken over, its permissions set (destroy removes it)`);
    return { id: String(existing.id), outs: await declared(existing.id, spec, op) };
  }
  await op.client.teamRoles.create(spec.name, spec.permissions);
  const made = await op.client.teamRoles.get(spec.name);
  if (!made) throw new GpuRentalError(`The team's role ${spec.name} was created, yet the service does not show it: run \`pulumi refresh\`, then up again.`);
  return { id: String(made.id), outs: { ...spec, roleId: made.id } };
}

/** Takes the team's role `id` under management, its name and permissions set to the declared ones. */
async function adoptTeamRole(id: string, spec: TeamRoleSpec, op: Operation): Promise<{ id: string; outs: TeamRoleSpec & TeamRoleOutputs }> {
  if (!(await roleById(id, op))) throw new NotFoundError(`Team role ${id} cannot be adopted: the team has no role ${id}. Check adoptId, and the account the resource uses.`);
  return { id, outs: await declared(Number(id), spec, op) };
}

/** The role as the team has it now (a change by hand shows as a change the next up reverts), or null when it is gone. */
async function readTeamRole(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & TeamRoleOutputs) | null> {
  const found = await roleById(id, op);
  return found ? { ...props, name: found.name, permissions: permissionsOf(found) ?? props.permissions, roleId: found.id } : null;
}

/** A role as `pulumi import` takes it, by its id: its name and permissions. Null when there is no such role. */
async function importTeamRole(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const found = await roleById(id, op);
  if (!found) return null;
  const inputs = { name: found.name, permissions: permissionsOf(found) ?? { api: {} } };
  return { inputs, outs: { ...inputs, roleId: found.id } };
}

async function updateTeamRole(id: string, _olds: Props, spec: TeamRoleSpec, op: Operation): Promise<TeamRoleSpec & TeamRoleOutputs> {
  return declared(Number(id), spec, op);
}

/** Removes the role (by its name now); one already gone counts as removed. */
async function deleteTeamRole(id: string, _props: Props, op: Operation): Promise<void> {
  const found = await roleById(id, op);
  if (found) await deletedOrGone(() => op.client.teamRoles.delete(found.name));
}

async function teamRoleWarnings(news: Props, unknown: unknown, op: Operation): Promise<string[]> {
  if (typeof news.name !== "string" || news.name === unknown) return [];
  const existing = await op.client.teamRoles.get(news.name);
  return existing ? [`the team has the role ${news.name} already (role ${existing.id}): up takes it over and sets its permissions, and destroy removes it.`] : [];
}

/** The role `id` made as declared (`PUT /api/v0/team/roles/{id}/`, by id). */
async function declared(id: number, spec: TeamRoleSpec, op: Operation): Promise<TeamRoleSpec & TeamRoleOutputs> {
  await op.client.teamRoles.update(id, { name: spec.name, permissions: spec.permissions });
  return { ...spec, roleId: id };
}

/** The team's role `id`; none when the account is no team (any more: deleting a team removes its roles). */
async function roleById(id: string, op: Operation): Promise<TeamRole | undefined> {
  return (await ofTheTeam(op.client.teamRoles.list())).find((role) => role.id === Number(id));
}

/** The service's permissions as a permission set, or undefined when it shows them otherwise (the vendor's list of texts). */
export function permissionsOf(role: TeamRole): PermissionSet | undefined {
  const parsed = PermissionSet.safeParse(role.permissions);
  return parsed.success ? parsed.data : undefined;
}
