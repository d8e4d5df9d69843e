import { z } from "zod";
import { FieldType, Order } from "./filters";

const num = z.number().nullable().optional();

/** An offer of the instance market, as `POST /api/v0/bundles/` returns it. Unknown extra fields are kept. */
export const Offer = z.looseObject({
  id: z.number().int(),
  ask_contract_id: z.number().int().optional(),
  gpu_name: z.string(),
  num_gpus: z.number().int(),
  dph_total: z.number(),
  machine_id: num,
  host_id: num,
  gpu_ram: num,
  gpu_total_ram: num,
  cpu_cores: num,
  cpu_cores_effective: num,
  cpu_ram: num,
  cpu_ghz: num,
  disk_space: num,
  disk_bw: num,
  inet_up: num,
  inet_down: num,
  reliability: num,
  reliability2: num,
  dlperf: num,
  dlperf_per_dphtotal: num,
  score: num,
  cuda_max_good: num,
  driver_version: z.string().nullable().optional(),
  pcie_bw: num,
  direct_port_count: num,
  geolocation: z.string().nullable().optional(),
  verification: z.string().nullable().optional(),
  verified: z.boolean().optional(),
  hosting_type: num,
  min_bid: num,
  dph_base: num,
  storage_cost: num,
  rentable: z.boolean().optional(),
  rented: z.boolean().optional(),
  is_bid: z.boolean().optional(),
  start_date: num,
  end_date: num,
  duration: num,
});
export type Offer = z.infer<typeof Offer>;

/** Fields an offer search can filter or order on, with their types (for reading filter values given as text); a filter on any other field is ignored, as the service ignores it. */
export const OFFER_FIELDS: Record<string, FieldType> = {
  id: "number", ask_contract_id: "number", bundle_id: "number", machine_id: "number", host_id: "number",
  num_gpus: "number", gpu_ram: "number", gpu_total_ram: "number", gpu_frac: "number", cpu_cores: "number",
  cpu_cores_effective: "number", cpu_ram: "number", cpu_ghz: "number", disk_space: "number", disk_bw: "number",
  inet_up: "number", inet_down: "number", reliability: "number", reliability2: "number", dlperf: "number",
  dlperf_per_dphtotal: "number", score: "number", total_flops: "number", cuda_max_good: "number",
  compute_cap: "number", pcie_bw: "number", direct_port_count: "number", hosting_type: "number", min_bid: "number",
  dph_base: "number", dph_total: "number", storage_cost: "number", start_date: "number", end_date: "number",
  duration: "number",
  gpu_name: "string", cpu_name: "string", driver_version: "string", geolocation: "location", verification: "string",
  verified: "boolean", external: "boolean", rentable: "boolean", rented: "boolean", is_bid: "boolean",
};

/**
 * Fields the live offer search filters on beyond those of OFFER_FIELDS (which the emulator's market carries): the
 * vendor's description of `POST /api/v0/bundles/` documents each as a filter (docs/service-facts.md#offer-search), with the
 * types its example offer and the recorded offers show. `datacenter` (`hosting_type`) and `ubuntu_version`
 * (`os_version`) are its aliases.
 */
const DOCUMENTED_FILTER_FIELDS: Record<string, FieldType> = {
  flops_per_dphtotal: "number", inet_up_cost: "number", inet_down_cost: "number", bw_nvlink: "number", gpu_max_power: "number",
  gpu_max_temp: "number", gpu_mem_bw: "number", pci_gen: "number",
  gpu_arch: "string", cpu_arch: "string", mobo_name: "string", os_version: "string", ubuntu_version: "string",
  has_avx: "boolean", datacenter: "boolean", gpu_display_active: "boolean", static_ip: "boolean", vms_enabled: "boolean",
};

/**
 * Every field an offer-search filter may name, with its type: a declared program's filters are checked against
 * it (sdk/filter-check.ts), since the service ignores a filter on a field it does not know and rents without it.
 */
export const OFFER_FILTER_FIELDS: Record<string, FieldType> = { ...OFFER_FIELDS, ...DOCUMENTED_FILTER_FIELDS };

export const OfferType = z.enum(["on-demand", "ondemand", "bid", "reserved"]);
export type OfferType = z.infer<typeof OfferType>;

/**
 * The body of `POST /api/v0/bundles/`: the reserved keys below, and any other key is a field filter
 * (`{"num_gpus": {"gte": 2}}`, a FieldFilter). Filters on fields the market does not know are ignored, as the
 * live service does, so other keys are not checked here: the search checks the filters of the fields it knows.
 */
export const OfferSearchRequest = z
  .object({
    order: Order.optional(),
    type: OfferType.optional(),
    limit: z.number().int().positive().optional(),
    allocated_storage: z.number().nonnegative().optional(),
  })
  .catchall(z.unknown());
export type OfferSearchRequest = z.infer<typeof OfferSearchRequest>;

/**
 * `POST /api/v0/bundles/`: `{offers: [...]}` (recorded 01), or one offer where the list should be, as the vendor's
 * example shows it (docs/service-facts.md#where-the-vendors-description-is-wrong): read it with offersOf.
 */
export const OfferSearchResponse = z.looseObject({ offers: z.union([z.array(Offer), Offer]) });
export type OfferSearchResponse = z.infer<typeof OfferSearchResponse>;

/** The offers of a search's answer, whichever form it has. */
export function offersOf(answer: OfferSearchResponse): Offer[] {
  return Array.isArray(answer.offers) ? answer.offers : [answer.offers];
}
