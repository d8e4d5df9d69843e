import { z } from "zod";

/**
 * `GET /api/v0/users/current/`. The live record names the user `fullname` (recorded); the spec says `full_name`:
 * both are read (fullNameOf). `credit` is in the spec and in the recorded record, not in the vendor's description:
 * an answer without it still reads (docs/service-facts.md#answers-clients-rely-on).
 */
export const User = z.looseObject({
  id: z.number().int(),
  email: z.string(),
  credit: z.number().nullable().optional(),
  ssh_key: z.string().nullable().optional(),
  fullname: z.string().nullable().optional(),
  full_name: z.string().nullable().optional(),
  tfa_status: z.enum(["enabled", "disabled", "legacy"]).optional(),
  username: z.string().nullable().optional(),
  email_verified: z.boolean().optional(),
  balance: z.number().optional(),
});
export type User = z.infer<typeof User>;

/** The user's name, from the live service's `fullname` or the spec's `full_name`. */
export function fullNameOf(user: User): string | null {
  return user.fullname ?? user.full_name ?? null;
}
