import type { Offer } from "../../sdk/schemas";
import type { FieldType } from "./filters";

/** The fields `search benchmarks` filters and orders on (the public client's list) and their types. */
export const BENCHMARK_FIELDS: Record<string, FieldType> = {
  contract_id: "number", dph_base: "number", gpu_name: "string", id: "number", image: "string", last_update: "number",
  launch_args: "string", machine_id: "number", num_gpus: "number", template_hash: "string", template_id: "number",
  type: "string", value: "number",
};

/** The image the market's machines were benchmarked with when they were listed. */
const BENCHMARK_IMAGE = "vastai/test:bench";

/**
 * The market's benchmarks (`GET /api/v0/benchmarks/`, docs/service-facts.md#benchmarks): each machine of the
 * market benchmarked once when listed, its `dlperf` as the result. Both the names the public client reads (`value`,
 * `template_hash`) and those of the description (`score`, `name`, `model`).
 */
export function benchmarkRows(offers: Iterable<Offer>) {
  return [...offers].map((offer) => ({
    id: offer.machine_id,
    machine_id: offer.machine_id,
    contract_id: offer.id,
    gpu_name: offer.gpu_name,
    num_gpus: offer.num_gpus,
    value: Number(offer.dlperf ?? 0),
    score: Number(offer.dlperf ?? 0),
    dph_base: offer.dph_base,
    type: "dlperf",
    name: "dlperf",
    model: "dlperf",
    template_hash: "",
    template_id: 0,
    launch_args: "",
    image: BENCHMARK_IMAGE,
    last_update: Number(offer.start_date ?? 0),
  }));
}
