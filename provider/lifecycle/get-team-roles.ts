import { z } from "zod";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";
import { permissionsOf } from "./team-role";

/** The getTeamRoles function: the roles of the team the account is (the owner's left out, as the service lists them). Read-only. */

const GetTeamRolesArgs = z.object({});
type GetTeamRolesArgs = z.infer<typeof GetTeamRolesArgs>;

interface RoleRow {
  id: number;
  name: string;
  permissions: Record<string, unknown>;
}

export const GET_TEAM_ROLES: LookupFunction<GetTeamRolesArgs, { roles: RoleRow[] }> = {
  description: {
    name: "getTeamRoles",
    description:
      "The roles of the team the account is, the owner's left out (as the service lists them): each role's id, name and permission " +
      "categories. The account must be a team.",
    inputs: {},
    outputs: {
      roles: {
        type: "array",
        items: {
          type: "object",
          object: {
            name: "TeamRoleRow",
            description: "A role of the team.",
            properties: {
              id: { type: "integer", description: "The role's id (a TeamRole's `roleId`; what `pulumi import` of a TeamRole takes)." },
              name: { type: "string", description: "The role's name." },
              permissions: { type: "map", values: { type: "any" }, description: "`{ api: { <category>: {} } }`: what its members may use." },
            },
            required: ["id", "name", "permissions"],
          },
        },
        description: "The roles, in the order the service lists them.",
      },
    },
    requiredOutputs: ["roles"],
    example: { args: {}, exports: "roles[0].name" },
  },
  args: specOf("getTeamRoles", GetTeamRolesArgs),
  async invoke(_args, op) {
    const roles = await op.client.teamRoles.list();
    return { roles: roles.map((role) => ({ id: role.id, name: role.name, permissions: permissionsOf(role) ?? { api: {} } })) };
  },
};
