import { z } from "zod";
import { publicKeyOf } from "../../sdk";
import type { ObjectDescription } from "./description";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getSshKeys function: the public keys registered on the account, oldest first. Read-only. */

const SSH_KEY: ObjectDescription = {
  name: "AccountSshKey",
  description: "A public key registered on the account: every instance created gets it.",
  properties: {
    id: { type: "integer", description: "The key's id: what an SshKey resource is imported by." },
    publicKey: { type: "string", description: "The public key line (`ssh-ed25519 AAAA... comment`)." },
    createdAt: { type: "number", nullable: true, description: "When it was registered, seconds since 1970." },
  },
  required: ["id", "publicKey", "createdAt"],
};

const GetSshKeysArgs = z.object({});
type GetSshKeysArgs = z.infer<typeof GetSshKeysArgs>;

export interface AccountSshKey {
  id: number;
  publicKey: string;
  createdAt: number | null;
}

export const GET_SSH_KEYS: LookupFunction<GetSshKeysArgs, { keys: AccountSshKey[] }> = {
  description: {
    name: "getSshKeys",
    description:
      "The public keys registered on the account, oldest first, whoever registered them (an SshKey of this or another stack, the " +
      "service's console, a script): to check that a key is there, or to find the id to import.",
    inputs: {},
    outputs: { keys: { type: "array", items: { type: "object", object: SSH_KEY }, description: "The keys, oldest first." } },
    requiredOutputs: ["keys"],
    example: { args: {}, exports: "keys[0].id" },
  },
  args: specOf("getSshKeys", GetSshKeysArgs),
  async invoke(_args, op) {
    const keys = (await op.client.sshKeys.list()).map((key) => ({ id: key.id, publicKey: publicKeyOf(key) ?? "", createdAt: key.created_at ?? null }));
    return { keys: keys.sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0) || a.id - b.id) };
  },
};
