import { z } from "zod";
import { GpuRentalError, NotFoundError } from "../../sdk";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";

/**
 * The Team kind: the account of the provider's key made a team (`POST /api/v0/team/`; one team an account, the key
 * that makes it being the team's). The service shows no team by name, only whether the account is one (its roles
 * answer), so a team is read as "the account is a team".
 */

const DESCRIPTION =
  "The team the account is: the key the resource uses makes its account a team (one team an account), with the roles `owner`, " +
  "`manager` and `member`; `TeamRole` and `TeamMember` then shape it. A team account's own SSH keys are refused by the service " +
  "(attach keys to instances instead). Another name replaces the team (the old one is deleted first); destroy deletes it, which only " +
  "the team's own key may, and ends its members' keys.";

const TeamSpec = z.object({ name: z.string().min(1).meta({ replaces: true, description: "The team's name, unique on the service." }) });
export type TeamSpec = z.infer<typeof TeamSpec>;

const TeamOutputs = z.object({ accountId: z.int().meta({ description: "The user id of the team's account (the one whose key made it)." }) });
export type TeamOutputs = z.infer<typeof TeamOutputs>;

export const TEAM: Kind<TeamSpec, TeamOutputs> = {
  // No adoptId shown: an account has one team, which `pulumi import` takes.
  description: describeResource({ name: "Team", description: DESCRIPTION, inputs: TeamSpec, outputs: TeamOutputs, adoptId: false }),
  spec: specOf("Team", TeamSpec),
  diff: (olds, news, unknown) => {
    const renamed = (unknown !== undefined && news.name === unknown) || olds.name !== news.name;
    return { changes: renamed, replaces: renamed ? ["name"] : [], deleteBeforeReplace: true };
  },
  async create(spec, op) {
    if (await isTeam(op)) throw new GpuRentalError(`The account is a team already: an account has one team. Import it (\`pulumi import gpu-rental:index:Team <name> ${spec.name}\`) or use another account.`);
    await op.client.teams.create(spec.name);
    return { id: spec.name, outs: { ...spec, accountId: (await op.client.users.current()).id } };
  },
  async adopt(id, spec, op) {
    if (!(await isTeam(op))) throw new NotFoundError(`Team ${id} cannot be adopted: the account is not a team.`);
    if (id !== spec.name) throw new GpuRentalError(`Team ${id} cannot be adopted as ${spec.name}: declare its name (a team cannot be renamed).`);
    return { id, outs: { ...spec, accountId: (await op.client.users.current()).id } };
  },
  read: async (id: string, props: Props, op: Operation) => ((await isTeam(op)) ? { ...props, name: props.name ?? id, accountId: (await op.client.users.current()).id } : null),
  import: async (id: string, op: Operation) => ((await isTeam(op)) ? { inputs: { name: id }, outs: { name: id, accountId: (await op.client.users.current()).id } } : null),
  async delete(_id, _props, op) {
    if (await isTeam(op)) await op.client.teams.destroy();
  },
};

/** Whether the account is a team: its roles answer (a personal account's are 404). */
async function isTeam(op: Operation): Promise<boolean> {
  try {
    await op.client.teamRoles.list();
    return true;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

/** A listing of the team's (roles, members): none when the account is no team (any more: deleting a team removes them). */
export function ofTheTeam<T>(listing: Promise<T[]>): Promise<T[]> {
  return listing.catch((error) => (error instanceof NotFoundError ? [] : Promise.reject(error)));
}
