import { z } from "zod";

/** `GET /api/v0/users/current/`. */
export const User = z.looseObject({
  id: z.number().int(),
  email: z.string(),
  credit: z.number(),
  ssh_key: z.string().nullable().optional(),
  full_name: z.string().nullable().optional(),
  tfa_status: z.enum(["enabled", "disabled", "legacy"]).optional(),
  username: z.string().nullable().optional(),
  email_verified: z.boolean().optional(),
  balance: z.number().optional(),
});
export type User = z.infer<typeof User>;
