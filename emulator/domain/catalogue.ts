import { Offer } from "../../sdk/schemas";
import { Random } from "./random";

/** GPU models of the seeded market: memory in MB, a typical on-demand $/hour per GPU, relative deep-learning perf. */
const GPU_MODELS = [
  { name: "RTX 3060", ramMb: 12288, price: [0.05, 0.12], dlperf: 6, cuda: 12.2 },
  { name: "RTX 3090", ramMb: 24576, price: [0.15, 0.35], dlperf: 18, cuda: 12.4 },
  { name: "RTX 4090", ramMb: 24564, price: [0.3, 0.7], dlperf: 32, cuda: 12.8 },
  { name: "RTX 5090", ramMb: 32607, price: [0.55, 1.0], dlperf: 45, cuda: 12.9 },
  { name: "RTX A5000", ramMb: 24564, price: [0.2, 0.4], dlperf: 17, cuda: 12.4 },
  { name: "RTX A6000", ramMb: 49140, price: [0.4, 0.8], dlperf: 24, cuda: 12.4 },
  { name: "Tesla V100", ramMb: 16384, price: [0.15, 0.4], dlperf: 14, cuda: 12.2 },
  { name: "L40S", ramMb: 46068, price: [0.7, 1.2], dlperf: 38, cuda: 12.8 },
  { name: "A100 PCIE", ramMb: 40960, price: [0.8, 1.4], dlperf: 40, cuda: 12.6 },
  { name: "A100 SXM4", ramMb: 81920, price: [1.0, 1.8], dlperf: 48, cuda: 12.6 },
  { name: "H100 PCIE", ramMb: 81559, price: [1.8, 2.6], dlperf: 70, cuda: 12.8 },
  { name: "H100 SXM", ramMb: 81559, price: [2.0, 3.5], dlperf: 85, cuda: 12.9 },
] as const;

/** Storage is priced per GB and month; hourly prices divide by the hours of a month. */
export const HOURS_PER_MONTH = 730;

const LOCATIONS = [
  "Texas, US", "Oregon, US", "Virginia, US", "Quebec, CA", "Ontario, CA", "Bavaria, DE", "Hesse, DE",
  "Ile-de-France, FR", "England, GB", "Stockholm, SE", "Tokyo, JP", "Singapore, SG", "Victoria, AU", "Sao Paulo, BR",
];
const GPU_COUNTS = [1, 1, 1, 1, 2, 2, 4, 8] as const;
const DRIVERS = ["535.183.01", "550.127.05", "560.35.03", "570.86.15"];

const round = (value: number, digits = 4) => Number(value.toFixed(digits));

/** Whether the seeded offer at `index` refuses bids (decided by position, so the random sequence is unchanged). */
const onDemandOnly = (index: number) => index % 10 === 9;

/**
 * A market of `count` offers, the same for the same seed. Offer ids start at 10000 (they are ask contract ids)
 * and machine ids at 1000, so neither is mistaken for an instance id.
 */
export function seedOffers(random: Random, count: number, nowSeconds: number): Offer[] {
  const offers: Offer[] = [];
  for (let i = 0; i < count; i++) {
    const model = random.pick(GPU_MODELS);
    const numGpus = random.pick(GPU_COUNTS);
    const perGpu = random.between(model.price[0], model.price[1]);
    const storageCost = round(random.between(0.05, 0.3), 3);
    const dphBase = round(perGpu * numGpus);
    const dphTotal = round(dphBase + (storageCost * 8) / HOURS_PER_MONTH);
    const reliability = round(random.between(0.9, 0.9999));
    const dlperf = round(model.dlperf * numGpus * random.between(0.85, 1.05), 2);
    const verified = random.chance(0.85);
    const datacenter = random.chance(0.3);
    const cpuCores = numGpus * random.pick([4, 8, 12, 16]);
    const durationDays = random.int(3, 120);
    const bidFactor = random.between(0.35, 0.6);
    offers.push({
      id: 10000 + i,
      ask_contract_id: 10000 + i,
      bundle_id: 500000 + i,
      machine_id: 1000 + i,
      host_id: 200 + Math.floor(i / 3),
      gpu_name: model.name,
      num_gpus: numGpus,
      gpu_ram: model.ramMb,
      gpu_total_ram: model.ramMb * numGpus,
      gpu_frac: 1,
      cpu_cores: cpuCores,
      cpu_cores_effective: cpuCores,
      cpu_ram: cpuCores * 4096,
      cpu_ghz: round(random.between(2.0, 3.8), 1),
      cpu_name: random.pick(["AMD EPYC 7543", "AMD EPYC 9354", "Intel Xeon Gold 6338", "AMD Ryzen 9 7950X"]),
      disk_space: round(random.between(100, 4000), 1),
      disk_bw: round(random.between(500, 6000), 1),
      inet_up: round(random.between(100, 5000), 1),
      inet_down: round(random.between(200, 8000), 1),
      reliability,
      reliability2: reliability,
      dlperf,
      dlperf_per_dphtotal: round(dlperf / dphTotal, 2),
      score: round((dlperf * reliability * 10) / (1 + dphTotal), 2),
      total_flops: round(dlperf * 2.5, 2),
      cuda_max_good: model.cuda,
      compute_cap: model.name.startsWith("H100") ? 900 : model.name.startsWith("A100") ? 800 : 860,
      driver_version: random.pick(DRIVERS),
      pcie_bw: round(random.between(6, 52), 1),
      direct_port_count: random.chance(0.9) ? random.int(4, 200) : 0,
      geolocation: random.pick(LOCATIONS),
      verification: verified ? "verified" : random.pick(["unverified", "deverified"]),
      verified,
      external: false,
      hosting_type: datacenter ? 1 : 0,
      // One offer in ten is on-demand only: it has no minimum bid and a `bid` search leaves it out.
      min_bid: onDemandOnly(i) ? null : round(dphBase * bidFactor),
      dph_base: dphBase,
      dph_total: dphTotal,
      storage_cost: storageCost,
      rentable: true,
      rented: false,
      is_bid: false,
      start_date: Math.floor(nowSeconds) - random.int(3600, 86400 * 30),
      end_date: Math.floor(nowSeconds) + durationDays * 86400,
      duration: durationDays * 86400,
    });
  }
  return offers;
}

/** A network volume offer: a cluster's shared disk, with what is left of its capacity in `disk_space`. */
export interface NetworkVolumeOffer {
  ask_contract_id: number;
  disk_space: number;
  inet_up: number;
  inet_down: number;
  reliability2: number;
  verified: boolean;
  geolocation: string;
  nw_disk_avg_bw: number;
  nw_disk_max_bw: number;
  nw_disk_min_bw: number;
  start_date: number;
  end_date: number;
  storage_cost: number;
  storage_cost_total: number;
  [field: string]: unknown;
}

/**
 * `count` network volume offers, the same for the same seed. Ids start at 70000, apart from instance offers
 * (10000...) so a volume offer id is never mistaken for an instance offer.
 */
export function seedNetworkVolumeOffers(random: Random, count: number, nowSeconds: number): NetworkVolumeOffer[] {
  const offers: NetworkVolumeOffer[] = [];
  for (let i = 0; i < count; i++) {
    const diskSpace = random.pick([500, 1000, 2000, 5000, 10000]);
    const storageCost = round(random.between(0.03, 0.15), 3);
    const avgBw = random.int(800, 4000);
    const durationDays = random.int(7, 365);
    offers.push({
      ask_contract_id: 70000 + i,
      disk_space: diskSpace,
      inet_up: round(random.between(500, 10000), 1),
      inet_down: round(random.between(500, 10000), 1),
      reliability2: round(random.between(0.9, 0.9999)),
      verified: random.chance(0.8),
      geolocation: random.pick(LOCATIONS),
      nw_disk_avg_bw: avgBw,
      nw_disk_max_bw: Math.round(avgBw * random.between(1.1, 1.6)),
      nw_disk_min_bw: Math.round(avgBw * random.between(0.4, 0.9)),
      start_date: Math.floor(nowSeconds) - random.int(3600, 86400 * 30),
      end_date: Math.floor(nowSeconds) + durationDays * 86400,
      storage_cost: storageCost,
      storage_cost_total: round((storageCost * diskSpace) / HOURS_PER_MONTH, 6),
    });
  }
  return offers;
}
