import { Offer } from "../../sdk/schemas";
import { Random } from "./random";

/** GPU models of the seeded market: memory in MB, a typical on-demand $/hour per GPU, relative deep-learning perf. */
const GPU_MODELS = [
  { name: "RTX 3060", ramMb: 12288, price: [0.05, 0.12], dlperf: 6, cuda: 12.2, memBw: 360, watts: 170, pcie: 4 },
  { name: "RTX 3090", ramMb: 24576, price: [0.15, 0.35], dlperf: 18, cuda: 12.4, memBw: 936, watts: 350, pcie: 4 },
  { name: "RTX 4090", ramMb: 24564, price: [0.3, 0.7], dlperf: 32, cuda: 12.8, memBw: 1008, watts: 450, pcie: 4 },
  { name: "RTX 5090", ramMb: 32607, price: [0.55, 1.0], dlperf: 45, cuda: 12.9, memBw: 1792, watts: 575, pcie: 5 },
  { name: "RTX A5000", ramMb: 24564, price: [0.2, 0.4], dlperf: 17, cuda: 12.4, memBw: 768, watts: 230, pcie: 4 },
  { name: "RTX A6000", ramMb: 49140, price: [0.4, 0.8], dlperf: 24, cuda: 12.4, memBw: 768, watts: 300, pcie: 4 },
  { name: "Tesla V100", ramMb: 16384, price: [0.15, 0.4], dlperf: 14, cuda: 12.2, memBw: 900, watts: 250, pcie: 3 },
  { name: "L40S", ramMb: 46068, price: [0.7, 1.2], dlperf: 38, cuda: 12.8, memBw: 864, watts: 350, pcie: 4 },
  { name: "A100 PCIE", ramMb: 40960, price: [0.8, 1.4], dlperf: 40, cuda: 12.6, memBw: 1555, watts: 250, pcie: 4 },
  { name: "A100 SXM4", ramMb: 81920, price: [1.0, 1.8], dlperf: 48, cuda: 12.6, memBw: 2039, watts: 400, pcie: 4 },
  { name: "H100 PCIE", ramMb: 81559, price: [1.8, 2.6], dlperf: 70, cuda: 12.8, memBw: 2000, watts: 350, pcie: 5 },
  { name: "H100 SXM", ramMb: 81559, price: [2.0, 3.5], dlperf: 85, cuda: 12.9, memBw: 3350, watts: 700, pcie: 5 },
] as const;
type GpuModel = (typeof GPU_MODELS)[number];

/** Storage is priced per GB and month; hourly prices divide by the hours of a month. */
export const HOURS_PER_MONTH = 730;

const LOCATIONS = [
  "Texas, US", "Oregon, US", "Virginia, US", "Quebec, CA", "Ontario, CA", "Bavaria, DE", "Hesse, DE",
  "Ile-de-France, FR", "England, GB", "Stockholm, SE", "Tokyo, JP", "Singapore, SG", "Victoria, AU", "Sao Paulo, BR",
];
const GPU_COUNTS = [1, 1, 1, 1, 2, 2, 4, 8] as const;
const DRIVERS = ["535.183.01", "550.127.05", "560.35.03", "570.86.15"];
/** GPUs of the hosts, by an offer's place in the market: an offer of fewer GPUs is a share of a bigger machine. */
const HOST_GPUS = [1, 2, 4, 8] as const;
const DISKS = ["Samsung SSD 990 PRO 2TB", "INTEL SSDPE2KX080T8", "Micron 7450 MTFDKCC3T8TFR", "WD_BLACK SN850X 4000GB"];
const BOARDS = ["H12SSL-i", "ROME2D32GM-2T", "X13DEI-T", "PRO WS WRX80E-SAGE SE WIFI"];
const OS_VERSIONS = ["20.04", "22.04", "24.04"];

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
    const dphTotal = round(dphBase + (storageCost * DEFAULT_DISK_GB) / HOURS_PER_MONTH);
    const reliability = round(random.between(0.9, 0.9999));
    const dlperf = round(model.dlperf * numGpus * random.between(0.85, 1.05), 2);
    const verified = random.chance(0.85);
    const datacenter = random.chance(0.3);
    const cpuCores = numGpus * random.pick([4, 8, 12, 16]);
    const hostGpus = Math.max(numGpus, HOST_GPUS[i % HOST_GPUS.length]);
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
      // The host's GPUs and cores, and this offer's share of them, as recorded offers show them.
      gpu_frac: round(numGpus / hostGpus),
      cpu_cores: (cpuCores * hostGpus) / numGpus,
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
    Object.assign(offers[i], serviceFields(offers[i], model, i));
  }
  return offers;
}

/**
 * What the live service's offers carry beyond the fields searches filter on (recorded 01 and the vendor's example:
 * docs/service-facts.md#records-as-the-vendor-describes-them), derived from the offer, its GPU model and its place
 * in the market: no further random draw, so a seed gives the market it gave before.
 */
function serviceFields(offer: Offer, model: GpuModel, i: number): Record<string, unknown> {
  const numGpus = offer.num_gpus;
  const diskHour = (offer.storage_cost! * DEFAULT_DISK_GB) / HOURS_PER_MONTH;
  const [major, minor, patch] = String(offer.driver_version).split(".").map(Number);
  return {
    cpu_arch: "amd64",
    gpu_arch: "nvidia",
    gpu_ids: Array.from({ length: numGpus }, (_, k) => offer.machine_id! * 10 + k),
    gpu_lanes: 16,
    gpu_mem_bw: model.memBw,
    gpu_max_power: model.watts,
    gpu_max_temp: 83,
    gpu_display_active: false,
    bw_nvlink: model.name.endsWith("SXM") || model.name.endsWith("SXM4") ? (numGpus > 1 ? 600 : 0) : 0,
    pci_gen: model.pcie,
    has_avx: 1,
    disk_name: DISKS[i % DISKS.length],
    mobo_name: BOARDS[i % BOARDS.length],
    os_version: OS_VERSIONS[i % OS_VERSIONS.length],
    driver_vers: major * 1_000_000 + minor * 1_000 + patch,
    public_ipaddr: `198.51.100.${(i % 254) + 1}`,
    static_ip: offer.hosting_type === 1,
    geolocode: 1_000_000 + LOCATIONS.indexOf(offer.geolocation as string),
    vericode: offer.verified ? 1 : 0,
    vms_enabled: i % 3 === 0,
    is_vm_deverified: false,
    resource_type: "gpu",
    reliability_mult: round(offer.reliability2! ** 2),
    expected_reliability: offer.reliability2,
    credit_discount_max: 0.4,
    discount_rate: 0,
    discounted_hourly: 0,
    flops_per_dphtotal: round(Number(offer.total_flops) / offer.dph_total, 2),
    vram_costperhour: round(offer.dph_total / (Number(offer.gpu_total_ram) / 1024), 6),
    inet_up_cost: 0,
    inet_down_cost: 0,
    internet_up_cost_per_tb: 0,
    internet_down_cost_per_tb: 0,
    // The machine's disk as a local volume offer (emulator/domain/volumes.ts): its id is the offer's.
    avail_vol_ask_id: offer.id,
    avail_vol_size: offer.disk_space,
    avail_vol_dph: round(offer.storage_cost! / HOURS_PER_MONTH, 6),
    nw_disk_avg_bw: null,
    nw_disk_max_bw: null,
    nw_disk_min_bw: null,
    bundled_results: null,
    cluster_id: null,
    hostname: null,
    webpage: null,
    logo: "/static/logos/gpu-rental.png",
    time_remaining: "",
    time_remaining_isbid: "",
    ...costsOf(offer.dph_base!, offer.dph_total, diskHour),
  };
}

/** The disk a search prices offers with (GB), when it does not say `allocated_storage`. */
export const DEFAULT_DISK_GB = 8;

/**
 * An offer's costs per hour as the service breaks them down: `search` (running: compute and disk), `instance`
 * (stopped: disk only), and the totals its searches show beside `dph_total` (no discount in the emulator).
 */
export function costsOf(compute: number, total: number, diskHour: number): Record<string, unknown> {
  const breakdown = (gpu: number, all: number) => ({ gpuCostPerHour: gpu, diskHour, totalHour: all, discountTotalHour: 0, discountedTotalPerHour: all });
  return {
    storage_total_cost: round(diskHour, 6),
    dph_total_adj: total,
    discounted_dph_total: total,
    search: breakdown(compute, total),
    instance: breakdown(0, round(diskHour, 6)),
  };
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
