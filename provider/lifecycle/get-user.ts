import { z } from "zod";
import { fullNameOf } from "../../sdk";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getUser function: the account the provider acts as, and its credit. Read-only; nothing secret. */

const GetUserArgs = z.object({});
type GetUserArgs = z.infer<typeof GetUserArgs>;

const UserSummary = z.object({
  id: z.int().meta({ description: "The user's id." }),
  email: z.string().meta({ description: "The account's email address." }),
  username: z.string().nullable().meta({ description: "The user name, when the account has one." }),
  fullName: z.string().nullable().meta({ description: "The user's full name, when given." }),
  credit: z.number().nullable().meta({ description: "The credit left, $ (null when the service's answer does not say)." }),
  twoFactor: z.boolean().meta({ description: "Whether the account logs in with a second factor." }),
});
export type UserSummary = z.infer<typeof UserSummary>;

export const GET_USER: LookupFunction<GetUserArgs, UserSummary> = {
  description: describeFunction({
    name: "getUser",
    description:
      "The account the provider acts as (its key's user): who it is, and its credit in $ at the time of the call. A program can " +
      "check that it deploys into the account it means to, or export what is left to spend.",
    args: GetUserArgs,
    result: UserSummary,
    example: { args: {}, exports: "credit" },
  }),
  args: specOf("getUser", GetUserArgs),
  async invoke(_args, op) {
    const user = await op.client.users.current();
    return {
      id: user.id,
      email: user.email,
      username: user.username ?? null,
      fullName: fullNameOf(user),
      credit: user.credit ?? null,
      twoFactor: user.tfa_status === "enabled" || user.tfa_status === "legacy",
    };
  },
};
