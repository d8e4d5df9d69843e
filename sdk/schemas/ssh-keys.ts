import { z } from "zod";

/** `POST /api/v0/ssh/` (add a key to the account) and `POST /api/v0/instances/{id}/ssh/` (attach one to an instance). */
export const SshKeyRequest = z.object({ ssh_key: z.string().min(1) }).strict();
export type SshKeyRequest = z.infer<typeof SshKeyRequest>;

/** A public key registered on the account. The spec does not show the record: `id` and `ssh_key` are what matter. */
export const SshKey = z.looseObject({
  id: z.number().int(),
  ssh_key: z.string(),
  created_at: z.number().nullable().optional(),
});
export type SshKey = z.infer<typeof SshKey>;

export const SshKeyResponse = SshKey.extend({ success: z.boolean().optional() });
export const SshKeyListResponse = z.looseObject({ ssh_keys: z.array(SshKey) });
