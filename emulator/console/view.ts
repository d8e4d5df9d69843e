import { createHash } from "node:crypto";
import { Offer } from "../../sdk/schemas";
import { durationSeconds } from "../../sdk/workflows/watchdog";
import { RESOURCE_ENV, STACK_ENV, TOKEN_ENV } from "../../sdk/workflows/tokens";
import type { InstanceRecord, UserRecord } from "../domain/records";
import { envVars } from "../domain/env-vars";
import { diskOf } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { storagePerHour } from "../domain/offers";
import { Faults } from "../control/faults";
import { instanceView } from "../http/views/instances";

/**
 * What the console page shows (`GET /_emulator/console`): the whole emulator as its operator sees it, every
 * account with its instances, spend, templates, volumes and keys, the market and the clock. It is read by the page
 * every second, so it is built from what the domain holds without searching it. It never carries a secret: API keys
 * by name only (not their hash nor their first characters), SSH keys by fingerprint, no instance's environment.
 */
export interface ConsoleView {
  now: number;
  clock: "frozen" | "running";
  /** Whether the control API needs its token (the page's controls work only with it). */
  tokenRequired: boolean;
  contention: number;
  stats: Marketplace["stats"] & { faultsInjected: number };
  faults: number;
  market: MarketRow[];
  accounts: AccountView[];
}

export interface MarketRow {
  gpu: string;
  offers: number;
  onMarket: number;
  /** Rented by instances of the emulator's accounts. */
  rented: number;
  /** Taken by other tenants (contention: an accepted offer that vanished first). */
  otherTenants: number;
  /** The cheapest and dearest on-demand $/hour still on the market (null when none is left). */
  cheapest: number | null;
  dearest: number | null;
}

export interface InstanceRow {
  id: number;
  label: string;
  status: string;
  gpu: string;
  /** $/hour as listed (compute and disk), and what it is billed now (disk only while stopped). */
  pricePerHour: number;
  billingNow: number;
  ageSeconds: number;
  /** Seconds left of its maxLifetime (read from its watchdog), or null. */
  lifetimeLeft: number | null;
  /** The creation token, and the stack (`project/stack`) and resource that rented it, when a Pulumi resource did (its environment says). */
  token: string | null;
  stack: string | null;
  resource: string | null;
  ssh: string | null;
}

export interface AccountView {
  id: number;
  email: string;
  credit: number;
  /** Everything charged so far, $: the billing views' total. */
  spent: number;
  /** $/hour charged right now, all instances together. */
  billingNow: number;
  instances: InstanceRow[];
  /**
   * Each instance's charge so far (ended ones too): its first and last charged second and the amount; only those
   * charged since the reading's `since` (the page's last reading: what an ended instance cost does not change).
   */
  charges: { instance: number; from: number; to: number; amount: number }[];
  /** What destroyed instances beyond the ledger's bound cost, summed. */
  earlier: number;
  templates: { id: number; name: string; image: string; hash: string }[];
  volumes: { id: number; name: string; type: string; size: number; instances: number[] }[];
  sshKeys: { id: number; type: string; fingerprint: string; comment: string }[];
  apiKeys: { id: number; name: string; scoped: boolean; created: number }[];
  /** The names of the account's environment variables, sorted: never a value. */
  envVars: string[];
}

/** The watchdog's first line in a composed onstart: `# gpu-rental watchdog (maxLifetime 15m, then destroy...`. */
const WATCHDOG_LIFETIME = /^# gpu-rental watchdog \(maxLifetime (\S+), then/;

/** What the console shows; `sinceSeconds`: the emulated time of the page's last reading (only charges made since). */
export function consoleView(market: Marketplace, faults: Faults, tokenRequired: boolean, cache: MarketCache, sinceSeconds = 0): ConsoleView {
  market.settle();
  const now = market.clock.now();
  const byOwner = new Map<number, InstanceRecord[]>();
  for (const instance of market.instances.all()) {
    const owned = byOwner.get(instance.ownerId) ?? [];
    byOwner.set(instance.ownerId, owned);
    owned.push(instance);
  }
  return {
    now,
    clock: market.clock.reading().frozen ? "frozen" : "running",
    tokenRequired,
    contention: market.contention,
    stats: { ...market.stats, faultsInjected: faults.injected },
    faults: faults.list().length,
    market: cache.rows(market),
    accounts: market.accounts.allUsers().map((user) => accountView(market, user, byOwner.get(user.id) ?? [], now, sinceSeconds * 1000)),
  };
}

function accountView(market: Marketplace, user: UserRecord, instances: InstanceRecord[], now: number, sinceMs: number): AccountView {
  const rows = instances.map((instance) => instanceRow(market, instance, now));
  const items = market.billing.itemsOf(user.id);
  const earlier = market.billing.earlierOf(user.id)?.amount ?? 0;
  return {
    id: user.id,
    email: user.email,
    credit: user.credit,
    spent: items.reduce((sum, item) => sum + item.amount, earlier),
    billingNow: rows.reduce((sum, row) => sum + row.billingNow, 0),
    instances: rows,
    charges: items.filter((item) => item.to >= sinceMs).map((item) => ({ instance: item.instanceId, from: item.from / 1000, to: item.to / 1000, amount: item.amount })),
    earlier,
    templates: market.templates
      .search(user.id, {})
      .filter((t) => t.creator_id === user.id)
      .map((t) => ({ id: t.id, name: t.content.name ?? "", image: t.content.image ?? "", hash: t.hash_id })),
    volumes: market.volumes.list(user.id).map((v) => ({ id: v.id, name: v.name, type: v.type, size: v.size, instances: [...v.instances] })),
    sshKeys: (user.sshKeys ?? []).map((k) => sshKeyRow(k.id, k.key)),
    apiKeys: market.accounts.keysOf(user.id).map((k) => ({ id: k.id, name: k.name, scoped: k.permissions !== null, created: k.createdAt / 1000 })),
    envVars: Object.keys(envVars.of(user)).sort(),
  };
}

function instanceRow(market: Marketplace, instance: InstanceRecord, now: number): InstanceRow {
  const view = instanceView(instance, now, market.lifecycle);
  const env = (name: string) => {
    const value = instance.config.env?.[name];
    return typeof value === "string" ? value : null;
  };
  const storage = storagePerHour(instance.offer, diskOf(instance));
  const computing = instance.intended === "running" && !instance.failure;
  const ssh = view.ssh_host && view.ssh_port ? `ssh -p ${view.ssh_port} root@${view.ssh_host}` : null;
  return {
    id: instance.id,
    label: instance.label,
    status: (view.actual_status as string | null) ?? "provisioning",
    gpu: `${instance.offer.num_gpus}x ${instance.offer.gpu_name}`,
    pricePerHour: view.dph_total as number,
    billingNow: storage + (computing ? instance.pricePerHour : 0),
    ageSeconds: (now - instance.createdAt) / 1000,
    lifetimeLeft: lifetimeLeft(market, instance, now),
    token: env(TOKEN_ENV),
    stack: env(STACK_ENV),
    resource: env(RESOURCE_ENV),
    ssh,
  };
}

/** What is left of the lifetime the watchdog in the instance's onstart holds it to, from the end of its boot. */
function lifetimeLeft(market: Marketplace, instance: InstanceRecord, now: number): number | null {
  const declared = WATCHDOG_LIFETIME.exec(instance.config.onstart ?? "")?.[1];
  if (!declared || instance.intended !== "running") return null;
  const { provisioningMs, loadingMs } = market.lifecycle;
  const booted = instance.bootStartedAt + (instance.restarted ? 0 : provisioningMs) + loadingMs;
  try {
    return Math.max(0, durationSeconds(declared) - Math.max(0, now - booted) / 1000);
  } catch {
    return null; // not a duration the watchdog reads: it would not run either
  }
}

/** An SSH public key as consoles list it: its type, its SHA-256 fingerprint and its comment; never the key itself. */
function sshKeyRow(id: number, line: string) {
  const [type = "", body = "", ...comment] = line.trim().split(/\s+/);
  const fingerprint = `SHA256:${createHash("sha256").update(Buffer.from(body, "base64")).digest("base64").replace(/=+$/, "")}`;
  return { id, type, fingerprint, comment: comment.join(" ") };
}

/**
 * The market by GPU model, computed again only when it changed: every acceptance, contention loss and release
 * moves one of the counts of the key, and the offers themselves never change.
 */
export class MarketCache {
  private key = "";
  private cached: MarketRow[] = [];

  rows(market: Marketplace): MarketRow[] {
    const { offersAccepted, offersLostToContention, secondAcceptances } = market.stats;
    const key = `${market.market.countOnMarket()}:${offersAccepted}:${offersLostToContention}:${secondAcceptances ?? 0}`;
    if (key !== this.key) {
      this.key = key;
      this.cached = marketRows(market);
    }
    return this.cached;
  }
}

function marketRows(market: Marketplace): MarketRow[] {
  const rows = new Map<string, MarketRow>();
  for (const offer of market.market.allOffers() as Iterable<Offer>) {
    const row = rows.get(offer.gpu_name) ?? { gpu: offer.gpu_name, offers: 0, onMarket: 0, rented: 0, otherTenants: 0, cheapest: null, dearest: null };
    rows.set(offer.gpu_name, row);
    row.offers++;
    const holder = market.market.holderOf(offer.id);
    if (!holder) {
      row.onMarket++;
      row.cheapest = Math.min(row.cheapest ?? Infinity, offer.dph_total);
      row.dearest = Math.max(row.dearest ?? -Infinity, offer.dph_total);
    } else if (holder.kind === "instance") row.rented++;
    else row.otherTenants++;
  }
  return [...rows.values()].sort((a, b) => a.gpu.localeCompare(b.gpu));
}
