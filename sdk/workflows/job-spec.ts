import { z } from "zod";
import { createHash } from "node:crypto";
import type { GpuRentalClient } from "../client";
import { ConfigurationError } from "../errors";
import { canonicalJson, describeIssues, publicKeyOf } from "../schemas";
import type { OfferFilters } from "../offer-filters";
import { ssh2 } from "../ssh2";
import { offerQuery, OfferCriteria } from "./criteria";
import { durationSeconds } from "./watchdog";

/**
 * A job (./job.ts): a command to run to completion on a rented GPU instance, resumed from its checkpoints after an
 * outbid. What a job file (`gpu-rental job run job.yaml`) holds, checked before anything is rented.
 */
export const JobSpec = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][\w.-]{0,63}$/, "a name of letters, digits, '.', '_' and '-', at most 64").describe("The job's name: its state and its instances' label carry it."),
    image: z.string().min(1, "an image is needed: the container the command runs in").describe("The container image the command runs in."),
    command: z.string().min(1).describe("The command, run by sh in the container; it finds its checkpoint folder in $CHECKPOINT_DIR and resumes from it."),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional().describe("Environment variables of the command."),
    gpu: z
      .object({
        name: z.string().optional().describe("GPU model (`gpu_name`), e.g. RTX 4090."),
        count: z.number().int().positive().optional().describe("GPUs per instance (`num_gpus`)."),
        minGpuRamGb: z.number().positive().optional().describe("Least GPU memory per GPU, GB."),
        filters: z.record(z.string(), z.unknown()).optional().describe("Further offer filters, as offer search takes them."),
      })
      .strict()
      .default({})
      .describe("The offers the job may run on."),
    interruptible: z
      .object({ maxBidPerHour: z.number().positive().describe("The most the job bids, $/hour of compute: it raises its bid up to this after an outbid, or rents elsewhere.") })
      .strict()
      .optional()
      .describe("Run on interruptible (bid) instances; without it, on demand."),
    checkpoints: z
      .object({
        volumeId: z.number().int().positive().describe("A network volume of the account, mounted on every instance of the job."),
        mountPath: z.string().regex(/^\/[\w./-]*$/).default("/checkpoints").describe("Where the volume is mounted ($CHECKPOINT_DIR)."),
      })
      .strict()
      .describe("Where the command keeps its checkpoints: a network volume, which every instance of the job mounts."),
    disk: z.number().positive().default(16).describe("Disk of each instance, GB."),
    maxRestarts: z.number().int().min(0).default(20).describe("The most times the command is started again (after an outbid or a failure)."),
    deadline: z.string().optional().describe("How long the job may take, from its start (`6h`, `1d`): past it, it is stopped and reported failed."),
    maxSpend: z.number().positive().optional().describe("The most the job may spend, $: past it, it is stopped and reported failed."),
    pollInterval: z.string().default("1m").describe("How often the watcher looks at the job's instance through the API (an outbid is seen then)."),
    statusInterval: z.string().default("5m").describe("How often the watcher reads the command's state on the instance, over SSH (a failed command waits three of these for it before stopping its instance)."),
  })
  .strict();

export type JobSpecInput = z.input<typeof JobSpec>;
export type JobSpec = z.output<typeof JobSpec>;

/** A job spec as given (a parsed job file), checked: the first problem is a ConfigurationError naming the field. */
export function parseJobSpec(input: unknown): JobSpec {
  const parsed = JobSpec.safeParse(input);
  if (!parsed.success) throw new ConfigurationError(`Invalid job: ${describeIssues(parsed.error)}`);
  const spec = parsed.data;
  if (spec.deadline !== undefined) durationSeconds(spec.deadline, "deadline");
  durationSeconds(spec.pollInterval, "pollInterval");
  durationSeconds(spec.statusInterval, "statusInterval");
  return spec;
}

/** What identifies a job's spec: a job taken over must be the one started. */
export function jobSpecDigest(spec: JobSpec): string {
  return createHash("sha256").update(canonicalJson(spec)).digest("hex").slice(0, 16);
}

/** The offer search of the job's instances: its GPU criteria, on its market, under its bid ceiling. */
export function jobCriteria(spec: JobSpec): OfferCriteria {
  const filters = { ...spec.gpu.filters } as OfferFilters;
  if (spec.gpu.name) filters.gpu_name = { eq: spec.gpu.name };
  if (spec.gpu.count) filters.num_gpus = { eq: spec.gpu.count };
  if (spec.gpu.minGpuRamGb) filters.gpu_ram = { gte: spec.gpu.minGpuRamGb * 1024 };
  return spec.interruptible
    ? { filters, type: "bid", maxPricePerHour: spec.interruptible.maxBidPerHour, order: [["dph_total", "asc"]] }
    : { filters, type: "on-demand", order: [["dph_total", "asc"]] };
}

/**
 * Checks a job against the account and the market before anything is rented: the checkpoint volume is the
 * account's and a network volume (a local one stays on a machine an outbid takes:
 * docs/service-facts.md#volumes-a-jobs-instances-share), the SSH key is registered on
 * the account (the watcher reads the job's exit with it), and an offer matches (for a bid, one whose minimum is
 * under the ceiling). Throws a ConfigurationError saying what to change.
 */
export async function checkJob(client: GpuRentalClient, spec: JobSpec, sshPrivateKey: string | Buffer): Promise<void> {
  const volume = await client.volumes.get(spec.checkpoints.volumeId);
  if (!volume) {
    throw new ConfigurationError(`checkpoints.volumeId ${spec.checkpoints.volumeId} is not a volume of this account: create a network volume (client.volumes.createNetwork) and give its id.`);
  }
  if ((volume as { type?: string }).type === "local_volume") {
    throw new ConfigurationError(`checkpoints.volumeId ${spec.checkpoints.volumeId} is a local volume, which stays on its machine: after an outbid the job must run elsewhere. Give a network volume.`);
  }
  await checkSshKey(client, sshPrivateKey);
  const criteria = jobCriteria(spec);
  const [offer] = await client.offers.search({ ...offerQuery(criteria), limit: 1 });
  if (offer) return;
  if (!spec.interruptible) throw new ConfigurationError(`No on-demand offer matches the job's gpu criteria (${JSON.stringify(criteria.filters)}): widen them.`);
  const [cheapest] = await client.offers.search({ ...offerQuery({ ...criteria, maxPricePerHour: undefined }), limit: 1 });
  if (!cheapest) throw new ConfigurationError(`No interruptible offer matches the job's gpu criteria (${JSON.stringify(criteria.filters)}): widen them.`);
  throw new ConfigurationError(
    `interruptible.maxBidPerHour ${spec.interruptible.maxBidPerHour} is under the market's minimum bid for these criteria (${cheapest.min_bid ?? cheapest.dph_total} $/hour now): raise it, or widen the criteria.`,
  );
}

/** The key's public half must be one of the account's SSH keys, which every new instance takes. */
async function checkSshKey(client: GpuRentalClient, privateKey: string | Buffer): Promise<void> {
  const parsed = ssh2().utils.parseKey(privateKey);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) throw new ConfigurationError(`The job's SSH key cannot be read: ${key instanceof Error ? key.message : "no key"}.`);
  const body = key.getPublicSSH().toString("base64");
  const registered = await client.sshKeys.list();
  if (registered.some((k) => (publicKeyOf(k) ?? "").split(/\s+/)[1] === body)) return;
  throw new ConfigurationError(
    `The job's SSH key (${key.type}) is not registered on the account: the watcher reads the job's exit over SSH. Register its public half (client.sshKeys.add, or the service's console) and run again.`,
  );
}
