import { z } from "zod";
import { publicKeyOf, sshKeyCreatedAt } from "../../sdk";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getSshKeys function: the public keys registered on the account, oldest first. Read-only. */

const GetSshKeysArgs = z.object({});
type GetSshKeysArgs = z.infer<typeof GetSshKeysArgs>;

const AccountSshKey = z.object({
  id: z.int().meta({ description: "The key's id: what an SshKey resource is imported by." }),
  publicKey: z.string().meta({ description: "The public key line (`ssh-ed25519 AAAA... comment`)." }),
  createdAt: z.number().nullable().meta({ description: "When it was registered, seconds since 1970." }),
});
export type AccountSshKey = z.infer<typeof AccountSshKey>;

const Result = z.object({
  keys: z.array(AccountSshKey).meta({
    named: { name: "AccountSshKey", description: "A public key registered on the account: every instance created gets it." },
    description: "The keys, oldest first.",
  }),
});

export const GET_SSH_KEYS: LookupFunction<GetSshKeysArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getSshKeys",
    description:
      "The public keys registered on the account, oldest first, whoever registered them (an SshKey of this or another stack, the " +
      "service's console, a script): to check that a key is there, or to find the id to import.",
    args: GetSshKeysArgs,
    result: Result,
    example: { args: {}, exports: "keys[0].id" },
  }),
  args: specOf("getSshKeys", GetSshKeysArgs),
  async invoke(_args, op) {
    const keys = (await op.client.sshKeys.list()).map((key) => ({ id: key.id, publicKey: publicKeyOf(key) ?? "", createdAt: sshKeyCreatedAt(key) }));
    return { keys: keys.sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0) || a.id - b.id) };
  },
};
