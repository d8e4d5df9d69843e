import { z } from "zod";

/** A permission set: `{"api": {"<category>": {}}}` (an empty object means no constraints). */
export const PermissionSet = z.object({ api: z.record(z.string(), z.record(z.string(), z.unknown())) }).strict();
export type PermissionSet = z.infer<typeof PermissionSet>;

/** `POST /api/v0/auth/apikeys/`. Without `permissions` the key has full access, as the console's default. */
export const CreateApiKeyRequest = z
  .object({
    name: z.string().max(100).optional(),
    permissions: PermissionSet.nullable().optional(),
    key_params: z.unknown().optional(),
  })
  .strict();
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;

/** A key as listings show it: never its value, which is shown once, at creation. */
export const ApiKey = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  permissions: PermissionSet.nullable(),
  key_prefix: z.string(),
  created_at: z.number(),
});
export type ApiKey = z.infer<typeof ApiKey>;

export const CreateApiKeyResponse = ApiKey.extend({ success: z.boolean(), key: z.string() });
export const ApiKeyListResponse = z.looseObject({ apikeys: z.array(ApiKey) });
export const ApiKeyResponse = z.looseObject({ apikey: ApiKey });
