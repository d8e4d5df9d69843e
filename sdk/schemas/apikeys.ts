import { z } from "zod";

/** The permission categories of keys and team roles (emulator/PERMISSIONS.md says which endpoints each opens). */
export const PERMISSION_CATEGORIES = ["misc", "user_read", "user_write", "instance_read", "instance_write", "billing", "team_read", "team_write"] as const;

/** `{api: {<category>: {...}}}`: known categories, each an object (its scopes or constraints, often empty). */
export const PermissionSet = z
  .object({
    api: z.strictObject(Object.fromEntries(PERMISSION_CATEGORIES.map((category) => [category, z.record(z.string(), z.unknown()).optional()])) as CategoryShape, {
      error: (issue) => (issue.code === "unrecognized_keys" ? `Unknown permission categories: ${issue.keys.join(", ")}. Known: ${PERMISSION_CATEGORIES.join(", ")}.` : undefined),
    }),
  })
  .strict();
type CategoryShape = Record<(typeof PERMISSION_CATEGORIES)[number], z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>>;
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

/**
 * A key as listings show it: never its value, which is shown once, at creation. The spec does not describe the
 * record: only `id` is required (keys are fetched and deleted by it); the rest is what the emulator sends,
 * optional so a live answer with other fields still parses. `permissions` is read loosely (a request's
 * PermissionSet is strict): a permission set of the live service with more in it must not make a listing fail.
 */
export const ApiKey = z.looseObject({
  id: z.number().int(),
  name: z.string().nullable().optional(),
  /** An object, or (the vendor's description) `false` when the key has no permission set: read loosely. */
  permissions: z.union([z.boolean(), z.looseObject({ api: z.record(z.string(), z.unknown()).optional() })]).nullable().optional(),
  key_prefix: z.string().nullable().optional(),
  created_at: z.number().nullable().optional(),
});
export type ApiKey = z.infer<typeof ApiKey>;

/** The new key: its `id` and, this once, its value `key`. */
export const CreateApiKeyResponse = ApiKey.extend({ success: z.boolean().optional(), key: z.string() });
export const ApiKeyListResponse = z.looseObject({ apikeys: z.array(ApiKey) });
export const ApiKeyResponse = z.looseObject({ apikey: ApiKey });
/**
 * `DELETE /api/v0/auth/apikeys/{id}/`: `{success: true}` (the emulator), or a bare JSON text such as "Successfully
 * Deleted API Key" (the vendor's description): either is a success.
 */
export const DeleteApiKeyResponse = z.union([z.looseObject({ success: z.boolean() }), z.string()]);
