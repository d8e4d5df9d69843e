import { z } from "zod";
import { TeamMember } from "../../sdk";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { specOf } from "./spec";
import { ofTheTeam } from "./team";

/**
 * The TeamMember kind: an invitation to the team by email, with a role (`POST /api/v0/team/invite/`), and the member
 * it makes once the invitee accepts (the service mails them; they need an account of their own). Both inputs
 * replace it, as the service has no call that changes a member's role. An invitation cannot be withdrawn: it ends
 * by itself after 4 hours.
 */

const DESCRIPTION =
  "A member of the account's team, by email, with a role: created as an invitation (the invitee needs an account of the service, and " +
  "accepts by mail within 4 hours), a member once accepted (`userId` then set; refresh sees it). Another email or role replaces it " +
  "(the service changes no member's role). Destroy removes the member and ends their keys in the team; an invitation not accepted " +
  "cannot be withdrawn, and lapses.";

const TeamMemberSpec = z.object({
  email: z.email().meta({ replaces: true, description: "The invitee's email: the address of their account on the service." }),
  role: z
    .string()
    .min(1)
    .refine((role) => role !== "owner", "a team has one owner: give another role")
    .meta({ replaces: true, description: "The role they get: a `TeamRole`'s name, or `manager` or `member`." }),
});
export type TeamMemberSpec = z.infer<typeof TeamMemberSpec>;

const TeamMemberOutputs = z.object({
  userId: z.int().nullable().meta({ description: "The member's user id, once they accepted (null while invited)." }),
  status: z.enum(["invited", "member"]).meta({ description: "`invited`, or `member` once they accepted." }),
});
export type TeamMemberOutputs = z.infer<typeof TeamMemberOutputs>;

export const TEAM_MEMBER: Kind<TeamMemberSpec, TeamMemberOutputs> = {
  // A member is declared by email, not adopted by adoptId.
  description: describeResource({ name: "TeamMember", description: DESCRIPTION, inputs: TeamMemberSpec, outputs: TeamMemberOutputs, adoptId: false }),
  spec: specOf("TeamMember", TeamMemberSpec),
  diff(olds, news, unknown) {
    const replaces = (["email", "role"] as const).filter((key) => (unknown !== undefined && news[key] === unknown) || String(olds[key]).toLowerCase() !== String(news[key]).toLowerCase());
    return { changes: replaces.length > 0, replaces, deleteBeforeReplace: true };
  },
  /** Invites, or takes over a member of that email who holds the role already. */
  async create(spec, op) {
    const member = await memberOf(spec.email, op);
    if (member && member.roles?.includes(spec.role)) {
      op.log(`${spec.email} is a member of the team already, as ${spec.role}: taken over (destroy removes them)`);
      return { id: spec.email, outs: { ...spec, userId: member.id, status: "member" as const } };
    }
    await op.client.teamMembers.invite(spec.email, spec.role);
    return { id: spec.email, outs: { ...spec, userId: null, status: "invited" as const } };
  },
  async adopt(id, spec, op) {
    return TEAM_MEMBER.create({ ...spec, email: id }, op);
  },
  /** A member as the team lists them; an invitation not accepted yet is not listed by the service, so it stays as it was. */
  async read(id: string, props: Props, op: Operation) {
    const member = await memberOf(id, op);
    if (!member) return props.status === "member" ? null : { ...props, userId: null, status: "invited" };
    return { ...props, role: member.roles?.[0] ?? member.role ?? props.role, userId: member.id, status: "member" };
  },
  async import(id: string, op: Operation) {
    const member = await memberOf(id, op);
    const role = member?.roles?.[0] ?? member?.role;
    if (!member || !role) return null;
    return { inputs: { email: member.email, role }, outs: { email: member.email, role, userId: member.id, status: "member" } };
  },
  async delete(id, props, op) {
    const member = await memberOf(id, op);
    if (member) await op.client.teamMembers.remove(member.id);
    else op.log(`the invitation of ${id} cannot be withdrawn (the service has no call for it): it lapses 4 hours after it was sent`);
    void props;
  },
};

async function memberOf(email: string, op: Operation): Promise<TeamMember | undefined> {
  const wanted = email.toLowerCase();
  // None when the account is no team (any more): deleting the team removed its members.
  return (await ofTheTeam(op.client.teamMembers.list())).find((member) => member.email.toLowerCase() === wanted && !member.roles?.includes("owner"));
}
