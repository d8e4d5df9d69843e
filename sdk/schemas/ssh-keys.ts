import { z } from "zod";

/** `POST /api/v0/ssh/` (add a key to the account) and `POST /api/v0/instances/{id}/ssh/` (attach one to an instance). */
export const SshKeyRequest = z.object({ ssh_key: z.string().min(1) }).strict();
export type SshKeyRequest = z.infer<typeof SshKeyRequest>;

/**
 * A public key registered on the account, as the live service shows it (the vendor's description, a recorded
 * answer, and a Terraform provider tested against the service): the key line is `public_key` in the answer of an
 * addition and `key` in the vendor's listing (read either with publicKeyOf); `created_at` is epoch seconds, a
 * float (recorded), though the vendor's description says a date-time text.
 */
export const SshKey = z.looseObject({
  id: z.number().int(),
  user_id: z.number().int().nullable().optional(),
  public_key: z.string().nullable().optional(),
  key: z.string().nullable().optional(),
  created_at: z.number().nullable().optional(),
});
export type SshKey = z.infer<typeof SshKey>;

/** The key line of a key record, whichever field carries it. */
export function publicKeyOf(key: SshKey): string | undefined {
  return key.public_key ?? key.key ?? undefined;
}

/** `POST /api/v0/ssh/` and `PUT /api/v0/ssh/{id}/`: `{success, key: {...}}`. */
export const SshKeyResponse = z.looseObject({ success: z.boolean().optional(), key: SshKey });
/** `GET /api/v0/ssh/`: a bare array of keys, not an object. */
export const SshKeyListResponse = z.array(SshKey);
/**
 * `POST /api/v0/instances/{id}/ssh/`: `{success, msg, key}`, where `key` is the key record as a JSON *text*
 * (recorded from the live service).
 */
export const AttachSshKeyResponse = z.looseObject({ success: z.boolean(), msg: z.string().optional(), key: z.string().optional() });
