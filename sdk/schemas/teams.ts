import { z } from "zod";
import { PermissionSet } from "./apikeys";

/**
 * Teams, their roles and members, and subaccounts (`/api/v0/team/...`, `/api/v0/users/`, `/api/v0/subaccounts`),
 * as the vendor describes them and the public client 1.9.1 calls them. A role's permissions are objects by
 * category under `api` (`{"api": {"instance_read": {}}}`, the vendor's docs); the vendor's description shows them as
 * a list of texts in answers, so answers are read as either.
 */

/** `POST /api/v0/team/`: the public client sends `transfer_credit` 0 unless told. */
export const CreateTeamRequest = z.object({ team_name: z.string().min(1), transfer_credit: z.number().min(0).optional() });
export const TeamMessageResponse = z.looseObject({ success: z.boolean().optional(), msg: z.string().optional() });
/** `DELETE /api/v0/team/`: the id of the team's key, a personal key again. */
export const TeamDeleteResponse = z.looseObject({ success: z.boolean().optional(), msg: z.string().optional(), pkey_id: z.number().int().optional() });

export const TeamRoleRequest = z.object({ name: z.string().min(1), permissions: PermissionSet });
/** `PUT /api/v0/team/roles/{id}/`: the vendor asks for both; the public client sends what it was given. */
export const UpdateTeamRoleRequest = z.object({ name: z.string().min(1).optional(), permissions: PermissionSet.optional() });

export const TeamRole = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  permissions: z.union([z.record(z.string(), z.unknown()), z.array(z.string())]),
  identifier: z.string().optional(),
});
export type TeamRole = z.infer<typeof TeamRole>;
/** `GET /api/v0/team/roles-full/`: a bare array, the owner's role left out. */
export const TeamRolesResponse = z.array(TeamRole);
/** `POST /api/v0/team/roles/`: `{msg: "success"}`. */
export const TeamRoleCreateResponse = z.looseObject({ msg: z.string().optional(), success: z.boolean().optional() });
/** `PUT /api/v0/team/roles/{id}/`: a bare JSON text in the vendor's example ("Successfully Updated Team Role For <name>"). */
export const TeamRoleUpdateResponse = z.union([z.string(), z.looseObject({ success: z.boolean().optional(), msg: z.string().optional() })]);
/** The deletions of a role or a member: `{status: "success", message}`. */
export const TeamStatusResponse = z.looseObject({ status: z.string().optional(), message: z.string().optional(), success: z.boolean().optional() });

/** `POST /api/v0/team/invite/`: the vendor takes a body; the public client 1.9.1 sends the query `?email=&role=` and `{}`. */
export const TeamInviteRequest = z.object({ email: z.email(), role: z.string().min(1) });

export const TeamMember = z.looseObject({
  id: z.number().int(),
  username: z.string().nullable().optional(),
  email: z.string(),
  fullname: z.string().nullable().optional(),
  /** The vendor's description; a Terraform provider reads one `role`. */
  roles: z.array(z.string()).optional(),
  role: z.string().optional(),
});
export type TeamMember = z.infer<typeof TeamMember>;
export const TeamMembersResponse = z.array(TeamMember);

/** `POST /api/v0/users/` as the public client sends it for `create subaccount`. */
export const CreateSubaccountRequest = z.object({
  email: z.string(),
  username: z.string(),
  password: z.string(),
  host_only: z.boolean().optional(),
  parent_id: z.literal("me"),
});
export const CreateSubaccountResponse = z.looseObject({ id: z.number().int(), username: z.string().optional(), email: z.string().optional(), key_id: z.number().int().optional() });

export const Subaccount = z.looseObject({
  id: z.number().int(),
  parent_id: z.number().int().optional(),
  key_id: z.number().int().nullable().optional(),
  created_at: z.union([z.string(), z.number()]).nullable().optional(),
  deleted_at: z.union([z.string(), z.number()]).nullable().optional(),
});
export type Subaccount = z.infer<typeof Subaccount>;
/** `GET /api/v0/subaccounts?owner=me`. */
export const SubaccountsResponse = z.looseObject({ users: z.array(Subaccount).default([]) });
