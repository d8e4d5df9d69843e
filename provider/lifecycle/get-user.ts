import { z } from "zod";
import { fullNameOf } from "../../sdk";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getUser function: the account the provider acts as, and its credit. Read-only; nothing secret. */

const GetUserArgs = z.object({});
type GetUserArgs = z.infer<typeof GetUserArgs>;

export interface UserSummary {
  id: number;
  email: string;
  username: string | null;
  fullName: string | null;
  credit: number;
  twoFactor: boolean;
}

export const GET_USER: LookupFunction<GetUserArgs, UserSummary> = {
  description: {
    name: "getUser",
    description:
      "The account the provider acts as (its key's user): who it is, and its credit in $ at the time of the call. A program can " +
      "check that it deploys into the account it means to, or export what is left to spend.",
    inputs: {},
    outputs: {
      id: { type: "integer", description: "The user's id." },
      email: { type: "string", description: "The account's email address." },
      username: { type: "string", nullable: true, description: "The user name, when the account has one." },
      fullName: { type: "string", nullable: true, description: "The user's full name, when given." },
      credit: { type: "number", description: "The credit left, $." },
      twoFactor: { type: "boolean", description: "Whether the account logs in with a second factor." },
    },
    requiredOutputs: ["id", "email", "username", "fullName", "credit", "twoFactor"],
    example: { args: {}, exports: "credit" },
  },
  args: specOf("getUser", GetUserArgs),
  async invoke(_args, op) {
    const user = await op.client.users.current();
    return {
      id: user.id,
      email: user.email,
      username: user.username ?? null,
      fullName: fullNameOf(user),
      credit: user.credit,
      twoFactor: user.tfa_status === "enabled" || user.tfa_status === "legacy",
    };
  },
};
