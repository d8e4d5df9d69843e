import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";
import { permissionsOf } from "./team-role";

/** The getTeamRoles function: the roles of the team the account is (the owner's left out, as the service lists them). Read-only. */

const GetTeamRolesArgs = z.object({});
type GetTeamRolesArgs = z.infer<typeof GetTeamRolesArgs>;

const RoleRow = z.object({
  id: z.int().meta({ description: "The role's id (a TeamRole's `roleId`; what `pulumi import` of a TeamRole takes)." }),
  name: z.string().meta({ description: "The role's name." }),
  permissions: z.record(z.string(), z.unknown()).meta({ description: "`{ api: { <category>: {} } }`: what its members may use." }),
});

const Result = z.object({
  roles: z.array(RoleRow).meta({
    named: { name: "TeamRoleRow", description: "A role of the team." },
    description: "The roles, in the order the service lists them.",
  }),
});

export const GET_TEAM_ROLES: LookupFunction<GetTeamRolesArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getTeamRoles",
    description:
      "The roles of the team the account is, the owner's left out (as the service lists them): each role's id, name and permission " +
      "categories. The account must be a team.",
    args: GetTeamRolesArgs,
    result: Result,
    example: { args: {}, exports: "roles[0].name" },
  }),
  args: specOf("getTeamRoles", GetTeamRolesArgs),
  async invoke(_args, op) {
    const roles = await op.client.teamRoles.list();
    return { roles: roles.map((role) => ({ id: role.id, name: role.name, permissions: permissionsOf(role) ?? { api: {} } })) };
  },
};
