import { GpuRentalClient } from "../sdk";

/** What an emulator process reports of its memory (`GET /_emulator/state`), in MiB. */
export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export async function memoryOf(url: string): Promise<Memory> {
  const res = await fetch(`${url}/_emulator/state`);
  if (res.status !== 200) throw new Error(`GET /_emulator/state: ${res.status}`);
  return ((await res.json()) as { memory: Memory }).memory;
}

/** The bound of the acceptance: 10 s after the load, RSS within 50 MB (decimal) of its value before it. */
export const RSS_BOUND_MIB = 50e6 / 2 ** 20;

export interface MixedLoadResult {
  seconds: number;
  /** Calls answered, by kind. */
  calls: Record<string, number>;
  /** Calls that failed, with the first few messages. */
  errors: number;
  firstErrors: string[];
}

/**
 * What a busy user does, over `workers` clients at once for `seconds`: each in turn searches offers, rents an
 * instance, relabels it and destroys it, makes and deletes a template (and searches them), makes and deletes a
 * network volume, and makes and revokes an API key. Every object made is deleted, so what the emulator holds
 * at the end is what it held at the start (but for the ids it has used and the billing ledger, which is
 * bounded). Each client rents on an offer of its own, so they do not take each other's.
 */
export async function mixedLoad(
  url: string,
  apiKey: string,
  options: { seconds: number; workers: number; onProgress?: (elapsed: number, calls: number) => void },
): Promise<MixedLoadResult> {
  const client = new GpuRentalClient({ apiUrl: url, apiKey });
  const offers = await client.offers.search({ order: [["dph_total", "asc"]], limit: options.workers });
  const volumeOffers = await client.volumes.searchNetworkOffers();
  const calls: Record<string, number> = {};
  const firstErrors: string[] = [];
  let errors = 0;
  const counted = async <T>(kind: string, call: () => Promise<T>): Promise<T | undefined> => {
    try {
      const result = await call();
      calls[kind] = (calls[kind] ?? 0) + 1;
      return result;
    } catch (error) {
      errors++;
      if (firstErrors.length < 5) firstErrors.push(`${kind}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  const progress = setInterval(() => options.onProgress?.((Date.now() - started) / 1000, total(calls)), 5000);
  const round = async (worker: number, n: number) => {
    const offer = offers[worker % offers.length];
    await counted("offer search", () => client.offers.search({ filters: { num_gpus: { gte: 1 }, dph_total: { lte: 5 } }, order: [["dph_total", "asc"]], limit: 64 }));
    const created = await counted("instance create", () => client.instances.create(offer.id, { image: "pytorch/pytorch", disk: 16, label: `load-${worker}` }));
    if (created) {
      await counted("instance label", () => client.instances.update(created.new_contract, { label: `load-${worker}-${n}` }));
      await counted("instance list", () => client.instances.list());
      await counted("instance destroy", () => client.instances.destroy(created.new_contract));
    }
    const template = await counted("template create", () => client.templates.create({ name: `load-${worker}-${n}`, image: "ubuntu:22.04", env: "-e A=1", onstart: "echo hi", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" }));
    await counted("template search", () => client.templates.search({ name: { eq: `load-${worker}-${n}` } }));
    if (template) await counted("template delete", () => client.templates.delete({ id: template.id }));
    const volumeOffer = volumeOffers[(worker + n) % volumeOffers.length];
    const volume = volumeOffer && (await counted("volume create", () => client.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 10, name: `load-${worker}` })));
    if (volume) await counted("volume delete", () => client.volumes.delete(volume.id));
    const key = await counted("api key create", () => client.apiKeys.create({ name: `load-${worker}-${n}` }));
    if (key) await counted("api key delete", () => client.apiKeys.delete(key.id));
  };
  try {
    await Promise.all(
      Array.from({ length: options.workers }, async (_, worker) => {
        for (let n = 0; Date.now() < deadline; n++) await round(worker, n);
      }),
    );
  } finally {
    clearInterval(progress);
  }
  return { seconds: (Date.now() - started) / 1000, calls, errors, firstErrors };
}

export const total = (calls: Record<string, number>) => Object.values(calls).reduce((sum, n) => sum + n, 0);

/** The emulator's memory before a mixed load, at its end, and `settleS` seconds after it, with the load's result. */
export async function loadAndSettle(
  url: string,
  apiKey: string,
  options: Parameters<typeof mixedLoad>[2] & { settleS: number },
): Promise<{ before: Memory; atEnd: Memory; after: Memory; result: MixedLoadResult }> {
  const before = await memoryOf(url);
  const result = await mixedLoad(url, apiKey, options);
  const atEnd = await memoryOf(url);
  await new Promise((resolve) => setTimeout(resolve, options.settleS * 1000));
  return { before, atEnd, after: await memoryOf(url), result };
}
