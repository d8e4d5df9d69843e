import { z } from "zod";

/**
 * A host's raise of a running contract's rates, pending until the renter accepts it (the new rates apply from the
 * contract's current end date) or rejects it (`/api/v0/instances/*-price-increase*`, in the public client 1.9.1,
 * not in the vendor's description). A rate the service does not give is null.
 */
const rate = z.number().nullable().optional();
export const PendingPriceIncrease = z.looseObject({
  pending_price_increase_id: z.number().int(),
  /** The instance's id. */
  contract_id: z.number().int(),
  host_id: z.number().int().nullable().optional(),
  old_gpu_costpersec: rate,
  new_gpu_costpersec: rate,
  old_disk_ram_costpersec: rate,
  new_disk_ram_costpersec: rate,
  old_bwu_cost: rate,
  new_bwu_cost: rate,
  old_bwd_cost: rate,
  new_bwd_cost: rate,
  old_platform_fee: rate,
  new_platform_fee: rate,
  /** Epoch seconds: when the contract ends now, and when it would end at the new rates. */
  contract_end_date: rate,
  ask_end_date: rate,
  created_at: rate,
});
export type PendingPriceIncrease = z.infer<typeof PendingPriceIncrease>;

/** `GET /api/v0/instances/pending-price-increases/`. */
export const PendingPriceIncreasesResponse = z.looseObject({
  success: z.boolean().optional(),
  count: z.number().int().optional(),
  truncated: z.boolean().optional(),
  pending_price_increases: z.array(PendingPriceIncrease).default([]),
});

/** `PUT /api/v0/instances/accept-price-increase/` and `reject-price-increase/`: this key and no other (the service refuses more). */
export const PriceIncreaseDecision = z.object({ pending_price_increase_id: z.number().int() }).strict();

export const PriceIncreaseDecisionResponse = z.looseObject({
  success: z.boolean(),
  pending_price_increase_id: z.number().int().optional(),
  contract_id: z.number().int().optional(),
});
