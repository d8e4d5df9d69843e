import { CreateInstanceRequest, OfferSearchRequest } from "../../sdk/schemas";
import { Accounts, Principal } from "./accounts";
import { envVars } from "./env-vars";
import { seedNetworkVolumeOffers, seedOffers } from "./catalogue";
import { Clock } from "./clock";
import { notFound, ServiceError } from "./errors";
import { actualStatus, DEFAULT_RESTART_MS, InstanceEvent, Instances, Lifecycle } from "./instances";
import { Market } from "./offers";
import { CryptoRandom, Random } from "./random";
import { PartChanges, Persistent } from "./persistence";
import { RateLimitChoice, RateLimits, SearchQuota } from "./ratelimits";
import { Billing } from "./billing";
import { Tfa } from "./tfa";
import { Templates } from "./templates";
import { Volumes } from "./volumes";
import { sshKeys } from "./ssh-keys";
import { Webhooks } from "./webhooks";
import { Serverless, workerPort } from "./serverless";
import { Router } from "./routing";
import { Autoscaler } from "./autoscaler";
import { parseSearchParams, workerFilters } from "../../sdk/search-params";
import { LogBook } from "./log-book";
import { drawOnDeposit, refundDeposit } from "./deposits";
import { InstanceWork } from "./instance-work";
import type { MachineWork } from "./machine-work";
import { Results } from "./results";
import { AuditLog } from "./audit";
import { MarketHistory, MarketRow } from "./gpu-metrics";
import { Deployments } from "./deployments";
import { Outbids } from "./outbids";
import type { EndpointRecord, UserRecord, WorkerGroupRecord, WorkerRecord } from "./records";

export interface MarketplaceOptions {
  seed?: number;
  clock?: Clock;
  /** Offers in the seeded market. Default 300. */
  offers?: number;
  lifecycle?: Partial<Lifecycle>;
  /** Probability that an accepted offer was taken by another tenant first. Default 0. */
  contention?: number;
  /** The seeded user's API key; random (from the seed) when not given. */
  apiKey?: string;
  /** Started for local use: webhooks may be `http://` and go to private and loopback targets (emulator/WEBHOOKS.md). Default true. */
  localWebhooks?: boolean;
  /** The rate limits per key: the live service's (`"service"`, the default), none (`"off"`), or some endpoints' own. */
  rateLimits?: RateLimitChoice;
}

export interface MarketStats {
  offersAccepted: number;
  /** Accepts refused because another tenant took the offer first (contention). */
  offersLostToContention: number;
  /** Accepts refused because the offer did not exist or was already rented. */
  offersUnavailable: number;
  /** Accepts that were the second of their offer (`doubleAcceptances`): answered, and their instance never boots. */
  secondAcceptances?: number;
  /** Offer searches answered to a key (what the service's limit and daily quota count). */
  offerSearches?: number;
}

export interface MarketplaceSnapshot {
  version: 1;
  parts: Record<string, unknown>;
  stats: MarketStats;
  contention: number;
  lifecycle: Lifecycle;
  rateLimits: RateLimits["settings"];
  /** Absent in saves from before they existed. */
  searchQuota?: { rowsPerDay: number };
  lowBidStatus?: LowBidStatus;
}

/**
 * How the service answers a bid below the offer's minimum, which it still turns into a stopped instance: an error
 * carrying `new_contract` at 400 (the default), or at 200 with `success: false`. Both are reported
 * (docs/service-facts.md#a-bid-below-the-minimum-still-creates-an-instance).
 */
export type LowBidStatus = 200 | 400;

/** What a save reads: the whole state (to compact), or what a save of changes needs (see Persistent). */
export interface SnapshotSource {
  snapshot(): MarketplaceSnapshot;
  /** The state less the parts that report their own changes, and those parts' changes since the last call. */
  delta(): { snapshot: MarketplaceSnapshot; changes: Record<string, PartChanges> };
}

export const DEFAULT_LIFECYCLE: Lifecycle = { provisioningMs: 2_000, loadingMs: 5_000, restartMs: DEFAULT_RESTART_MS };

/**
 * The whole emulated service, without HTTP: users and keys, the offer market, instances, and the knobs tests
 * turn (clock, contention, lifecycle durations).
 */
export class Marketplace {
  readonly clock: Clock;
  readonly random: Random;
  /** Its own stream, so the contention a seed gives does not depend on what else drew random numbers. */
  private readonly contentionRandom: Random;
  readonly accounts: Accounts;
  readonly market: Market;
  readonly instances: Instances;
  readonly templates: Templates;
  readonly volumes: Volumes;
  /** Two-factor authentication (emulator/TFA.md), with the outbox of codes it "sent". */
  readonly tfa: Tfa;
  readonly rateLimits: RateLimits;
  /** The daily quota of offer search per key (off unless set). */
  readonly searchQuota: SearchQuota;
  readonly billing = new Billing();
  readonly webhooks: Webhooks;
  /** Serverless endpoints and worker groups (emulator/SERVERLESS.md), their router and their autoscaler. */
  readonly serverless: Serverless;
  readonly router: Router;
  readonly autoscaler: Autoscaler;
  /** Texts answered by URL (logs, a command's output), and the work on instances' machines that makes them. */
  readonly results = new Results();
  /** The accounts' important actions (`GET /api/v0/audit_logs/`): not saved. */
  readonly auditLog = new AuditLog();
  readonly instanceWork: InstanceWork;
  /** The emulated machines' side of that work (set by the machines' runner); undefined without machines. */
  machineWork?: MachineWork;
  /** The market over the clock, for the GPU metrics' history: sampled as offers are rented and given back. */
  readonly marketHistory = new MarketHistory(() => this.marketRows());
  /** The folder of the cloud connections' buckets (emulator/domain/cloud.ts): set where the emulator keeps files. */
  cloudRoot?: string;
  /** Deployments (emulator/DEPLOYMENTS.md): code served by an endpoint and a group made for it. */
  readonly deployments: Deployments;
  /** The autoscaler's log lines, by endpoint and by worker group (not saved). */
  readonly serverlessLogs = new LogBook();
  /**
   * Whether workers have emulated machines whose model server the autoscaler probes before routing to them (set
   * by the machines' runner); without, a worker is ready once its instance runs.
   */
  workersServe = false;
  /** The emulator's own URL, where workers report (`REPORT_ADDR`, as the service's workers have it): set once it listens. */
  autoscalerUrl?: string;
  readonly seededUser: UserRecord;
  readonly seededKey: string;
  lifecycle: Lifecycle;
  contention: number;
  lowBidStatus: LowBidStatus = 400;
  /**
   * How many of the next acceptances are the second acceptance of their offer, as the live service has been seen
   * to accept one offer twice at about the same time (docs/service-facts.md#two-acceptances-of-one-offer-can-both-succeed): each is answered with its `new_contract`
   * like any other, but another acceptance holds the machine, and its instance never boots. Not saved.
   */
  doubleAcceptances = 0;
  /** Outbids of the emulator's own, on its clock (./outbids.ts); off unless set. Not saved. */
  readonly outbids: Outbids;
  readonly stats: MarketStats = { offersAccepted: 0, offersLostToContention: 0, offersUnavailable: 0, secondAcceptances: 0, offerSearches: 0 };

  constructor(private readonly options: MarketplaceOptions = {}) {
    this.clock = options.clock ?? new Clock();
    this.random = new Random(options.seed ?? 1);
    this.contentionRandom = new Random((options.seed ?? 1) ^ 0x5eed);
    this.lifecycle = { ...DEFAULT_LIFECYCLE, ...options.lifecycle };
    this.contention = options.contention ?? 0;
    const now = () => this.clock.now();
    this.accounts = new Accounts(now);
    this.webhooks = new Webhooks({ now, users: () => this.accounts.allUsers(), local: options.localWebhooks ?? true });
    this.rateLimits = new RateLimits(now);
    if (options.rateLimits) this.rateLimits.choose(options.rateLimits);
    this.searchQuota = new SearchQuota(now);
    // 2FA secrets and codes from node:crypto, never the seed: a seeded stream would replay them after a restart.
    this.tfa = new Tfa({ accounts: this.accounts, clock: this.clock, random: new CryptoRandom() });
    this.market = new Market(seedOffers(this.random, options.offers ?? 300, this.clock.nowSeconds()));
    this.templates = new Templates(now);
    // Volume offers from their own random stream, so they do not shift what the seed gives the rest.
    const volumeOffers = seedNetworkVolumeOffers(new Random((options.seed ?? 1) ^ 0x701), 40, this.clock.nowSeconds());
    // Every charge (an instance's compute and disk, a volume's storage) comes off the owner's credit, into the ledger.
    // An instance's prepaid deposit pays its charges first (`fromCredit`: what is left for the credit).
    const charge = (ownerId: number, id: number, amount: number, period: { from: number; to: number }, volume?: true, fromCredit = amount) => {
      const user = this.accounts.user(ownerId);
      if (user && fromCredit > 0) {
        user.credit -= fromCredit;
        this.webhooks.creditChanged(user, user.credit + fromCredit, user.credit);
      }
      this.billing.record(ownerId, id, amount, period, volume);
    };
    this.volumes = new Volumes(volumeOffers, {
      now,
      localOffers: () => this.market.onMarket(),
      charge: (ownerId, volumeId, amount, period) => charge(ownerId, volumeId, amount, period, true),
      ended: (volumeId) => this.billing.ended(volumeId),
    });
    this.instances = new Instances({
      now,
      lifecycle: () => this.lifecycle,
      takeOffer: (offerId, instanceId) => this.changeMarket(() => this.market.take(offerId, { kind: "instance", instanceId })),
      findOffer: (offerId) => this.market.offer(offerId),
      releaseOffer: (offerId) => this.changeMarket(() => this.market.release(offerId)),
      issueInstanceKey: (ownerId, instanceId) => {
        const key = this.accounts.issueKey(ownerId, { name: `instance ${instanceId}`, instanceId });
        return { id: key.id, key: key.key };
      },
      revokeKey: (keyId) => this.accounts.revokeKeyById(keyId),
      charge: (ownerId, instanceId, amount, period) => charge(ownerId, instanceId, amount, period, undefined, drawOnDeposit(this.instances.byId(instanceId), amount)),
      ended: (instanceId, instance) => {
        refundDeposit(instance, this.accounts.user(instance.ownerId));
        this.billing.ended(instanceId);
      },
      notify: (instance, event) => {
        const user = this.accounts.user(instance.ownerId);
        if (user) this.webhooks.emit(user, event === "outbid" ? "client:outbid" : `client:instance_${event}`, ...eventText(instance.id, event));
      },
      pick: (min, max) => this.random.int(min, max),
      templates: this.templates,
      accountEnv: (ownerId) => {
        const user = this.accounts.user(ownerId);
        return user ? envVars.of(user) : {};
      },
      volumes: this.volumes,
      minBid: (offerId) => this.market.minBid(offerId),
    });
    this.instanceWork = new InstanceWork({ now, find: (ownerId, id) => this.instances.find(ownerId, id), work: () => this.machineWork, results: this.results });
    this.outbids = new Outbids(new Random((options.seed ?? 1) ^ 0x0b1d), {
      now,
      running: () => this.instances.all().filter((i) => i.isBid && actualStatus(i, now(), this.lifecycle) === "running"),
      outbid: (instance, at) => this.instances.outbid(instance.id, at),
      setMinBid: (offerId, value) => {
        this.market.setMinBid(offerId, value);
        // Its instance shows the minimum of the moment (`min_bid`), which a bid must beat to run again.
        for (const i of this.instances.all()) if (i.offer.id === offerId) i.offer = { ...i.offer, min_bid: this.market.minBid(offerId) };
      },
    });
    this.clock.onMove(() => this.outbids.tick());
    this.serverless = new Serverless({ now, templateHash: (ownerId, by) => this.templateHash(ownerId, by) });
    this.router = new Router({ now, candidates: (endpoint) => this.routeCandidates(endpoint) });
    this.autoscaler = new Autoscaler({
      now,
      serverless: this.serverless,
      router: this.router,
      instance: (id) => this.instances.byId(id),
      status: (instance) => actualStatus(instance, now(), this.lifecycle),
      rent: (group, endpoint) => this.rentWorker(group, endpoint),
      start: (instance) => this.instances.update(instance, { state: "running" }),
      stop: (instance) => this.instances.update(instance, { state: "stopped" }),
      destroy: (instance) => this.instances.destroy(instance),
      log: (endpoint, group, line) => this.serverlessLogs.add(endpoint.id, group?.id, now(), line),
      probes: (instance) => this.workersServe && instance.runtype !== "args" && workerPort(instance) !== undefined,
    });
    this.sampleMarket();
    this.deployments = new Deployments({
      now,
      serverless: this.serverless,
      removeEndpoint: (ownerId, endpointId) => this.removeEndpoint(ownerId, endpointId),
      workerHealth: (worker) => {
        const instance = this.instances.byId(worker.instanceId);
        const error = worker.error ?? (instance?.failure ? (instance.statusMsg ?? "its instance failed") : undefined);
        // Served: ready (its model loaded, or, without machines, its instance running), or ready and being replaced.
        const state = this.autoscaler.stateOf(worker);
        return { loaded: state === "ready" || state === "updating", error };
      },
    });
    this.seededUser = this.accounts.addUser({ email: "demo@gpu-rental.test", fullName: "Demo User", credit: 1000 });
    this.seededKey = this.accounts.issueKey(this.seededUser.id, { name: "seeded", value: options.apiKey }).key;
  }

  /** Every offer of the market, and whether it is rented now (the GPU metrics read them). */
  marketRows(): MarketRow[] {
    return [...this.market.allOffers()].map((offer) => ({ offer, rented: this.market.holderOf(offer.id) !== undefined }));
  }

  /** A sample of the market for the metrics' history, at the clock's time. */
  sampleMarket(): void {
    this.marketHistory.sample(this.clock.now());
  }

  /** Rents or gives back an offer, telling the metrics' history (which keeps the market as it was before). */
  private changeMarket<T>(change: () => T): T {
    const now = this.clock.now();
    this.marketHistory.changing(now);
    const result = change();
    this.marketHistory.changed(now);
    return result;
  }

  /** Where committed state goes (set by `--data-dir`); without it, state lives in memory only. */
  durability?: { save(source: SnapshotSource): Promise<void> };

  /**
   * Charges everything that bills (instances, volumes) up to now, lets the machines catch up with the clock, and the
   * autoscaler look at its endpoints; answers whether the autoscaler changed anything (a worker rented, stopped, ...).
   */
  settle(): boolean {
    this.outbids.tick();
    this.instances.settle();
    this.volumes.settle();
    // Before the autoscaler clears failed workers: a deployment learns which of its versions failed.
    this.deployments.observe();
    return this.autoscaler.tick();
  }

  /** Called after every change a client is about to be told of: with a data dir, it is on disk first. */
  commit(): Promise<void> {
    return this.durability ? this.durability.save(this) : Promise.resolve();
  }

  /** The parts of the state a `--data-dir` keeps, by the name they are saved under. */
  private persistentParts(): Record<string, Persistent> {
    const { clock, random, contentionRandom, accounts, market, instances, templates, volumes, tfa, billing, serverless, deployments } = this;
    return { clock, random, contentionRandom, accounts, market, instances, templates, volumes, tfa, billing, serverless, deployments };
  }

  snapshot(): MarketplaceSnapshot {
    return this.snapshotOf(Object.entries(this.persistentParts()));
  }

  delta(): { snapshot: MarketplaceSnapshot; changes: Record<string, PartChanges> } {
    const entries = Object.entries(this.persistentParts());
    const changes: Record<string, PartChanges> = {};
    for (const [name, part] of entries) {
      const changed = part.changes?.();
      if (changed) changes[name] = changed;
    }
    return { snapshot: this.snapshotOf(entries.filter(([, part]) => !part.changes)), changes };
  }

  private snapshotOf(entries: [string, Persistent][]): MarketplaceSnapshot {
    const parts = Object.fromEntries(entries.map(([name, part]) => [name, part.snapshot()]));
    const settings = {
      contention: this.contention,
      lifecycle: this.lifecycle,
      rateLimits: this.rateLimits.settings,
      searchQuota: { rowsPerDay: this.searchQuota.rowsPerDay },
      lowBidStatus: this.lowBidStatus,
    };
    return { version: 1, parts, stats: { ...this.stats }, ...settings };
  }

  restore(data: MarketplaceSnapshot): void {
    if (data.version !== 1) throw new Error(`unsupported state version ${data.version}`);
    for (const [name, part] of Object.entries(this.persistentParts())) {
      if (!(name in data.parts) && ADDED_LATER.has(name)) continue;
      if (!(name in data.parts)) throw new Error(`the saved state has no ${name}: it was written by another version of the emulator`);
      part.restore(data.parts[name]);
    }
    this.billing.reconcile(new Set([...this.instances.all().map((instance) => instance.id), ...this.volumes.ids()]));
    Object.assign(this.stats, data.stats);
    // Settings given on this start win over the saved ones.
    this.contention = this.options.contention ?? data.contention;
    this.lifecycle = { ...data.lifecycle, ...this.options.lifecycle };
    Object.assign(this.rateLimits.settings, data.rateLimits);
    if (this.options.rateLimits) this.rateLimits.choose(this.options.rateLimits);
    this.searchQuota.rowsPerDay = data.searchQuota?.rowsPerDay ?? 0;
    this.lowBidStatus = data.lowBidStatus ?? 400;
    // The metrics' history starts again from the market as restored (it is not saved).
    this.sampleMarket();
    // A seeded key given on this start (`--api-key`) works even if the saved state never knew it.
    if (!this.accounts.knows(this.seededKey)) this.accounts.issueKey(this.seededUser.id, { name: "seeded", value: this.seededKey });
  }

  /** An offer search; with `caller` (a key's id) counted against that key's daily search quota. */
  searchOffers(request: OfferSearchRequest, caller?: number) {
    if (caller === undefined) return this.market.search(request);
    this.searchQuota.check(caller);
    this.stats.offerSearches = (this.stats.offerSearches ?? 0) + 1;
    const offers = this.market.search(request);
    this.searchQuota.count(caller, offers.length);
    return offers;
  }

  /**
   * Rents by criteria in one call (`PUT /api/v0/launch_instance/`): the offers `query` finds, best first (its
   * `order` and `limit`), are tried in turn; one taken by another tenant meanwhile is passed over. Other refusals
   * (a bad body, a bid too low) are the request's and end the launch. No match at all is `no_such_ask`.
   */
  launch(principal: Principal, query: OfferSearchRequest, request: CreateInstanceRequest) {
    const candidates = this.searchOffers(query);
    for (const offer of candidates) {
      try {
        return this.acceptOffer(principal, offer.id, request);
      } catch (error) {
        if (!(error instanceof ServiceError && error.code === "no_such_ask" && error.kind === "not_found")) throw error;
      }
    }
    const tried = candidates.length ? ` (${candidates.length} matched, all taken meanwhile)` : "";
    throw notFound("no_such_ask", `No offer matches the launch query${tried}: widen the query (q) and launch again.`);
  }

  /**
   * Accepts an offer. With contention, the offer may have been taken by another tenant a moment before: it
   * leaves the market and the client gets `no_such_ask`, as it would from the live service. With
   * `doubleAcceptances`, the acceptance is the second of its offer: it is answered, but never boots. A bid below
   * the minimum makes a stopped instance that the refusal names (`new_contract`), as the live service does.
   */
  acceptOffer(principal: Principal, offerId: number, request: CreateInstanceRequest) {
    return this.acceptFor(principal.user, offerId, request);
  }

  /** An acceptance for `user`: a client's, or the autoscaler's for the owner of an endpoint. */
  private acceptFor(user: UserRecord, offerId: number, request: CreateInstanceRequest) {
    try {
      if (this.contention > 0 && this.market.available(offerId) && this.contentionRandom.chance(this.contention)) {
        this.market.take(offerId, { kind: "other_tenant" });
        this.stats.offersLostToContention++;
      }
      const second = this.doubleAcceptances > 0 && this.market.offer(offerId) !== undefined;
      const created = this.instances.create(user.id, offerId, request, { secondAcceptance: second });
      if (second) {
        this.doubleAcceptances--;
        this.stats.secondAcceptances = (this.stats.secondAcceptances ?? 0) + 1;
        // The other acceptance holds the machine, whether it came first or at the same moment as this one.
        if (this.market.available(offerId)) this.market.take(offerId, { kind: "other_tenant" });
      }
      // As on the live service, the instance takes the account's SSH keys of the moment (a later one is attached).
      created.instance.sshKeys = sshKeys.of(user).map((k) => k.key);
      this.stats.offersAccepted++;
      if (created.refusal) throw this.lowBidStatus === 200 ? new ServiceError("declined", created.refusal.code, created.refusal.message, created.refusal.extra) : created.refusal;
      return created;
    } catch (error) {
      if (error instanceof ServiceError && error.code === "no_such_ask") {
        this.stats.offersUnavailable++;
        // cancel_unavail: fail with 410 rather than 404, as the live service does.
        if (request.cancel_unavail) throw new ServiceError("gone", error.code, error.message);
      }
      throw error;
    }
  }

  /**
   * Rents a worker for a group as its owner would: the cheapest offer its criteria and `gpu_ram` find (one taken
   * meanwhile is passed over), created from its template. Answers the instance's id, or why none was rented.
   */
  private rentWorker(group: WorkerGroupRecord, endpoint: EndpointRecord): number | string {
    const owner = this.accounts.user(group.ownerId);
    // A deployment's worker is made from the deployment (its image, its env, the image's start), not a template.
    const made = group.deploymentId === undefined ? undefined : this.deployments.workerRequest(group, { api: this.autoscalerUrl, autoscaler: this.autoscalerUrl });
    if (typeof made === "string") return made;
    if (!owner || (!group.templateHash && !made)) return "the group's owner or template is gone";
    const filters = workerFilters(parseSearchParams(group.searchParams), group.gpuRam) as Record<string, unknown>;
    // The CLI's own `rented=False`: the market searches what is not rented anyway.
    delete filters.rented;
    let offers;
    try {
      offers = this.searchOffers({ ...filters, order: [["dph_total", "asc"]], limit: 20 } as OfferSearchRequest);
    } catch (error) {
      return `the search of ${JSON.stringify(group.searchParams)} was refused: ${(error as Error).message}`;
    }
    const request = made ?? ({
      template_hash_id: group.templateHash,
      label: `${endpoint.name} worker (group ${group.id})`,
      ...(this.autoscalerUrl && { env: { REPORT_ADDR: this.autoscalerUrl } }),
    } as CreateInstanceRequest);
    for (const offer of offers) {
      try {
        const { instance } = this.acceptFor(owner, offer.id, request);
        // A creating worker bills its storage only; compute from when it loads (the vendor's billing by state).
        instance.computeFrom = instance.createdAt + this.lifecycle.provisioningMs;
        return instance.id;
      } catch (error) {
        if (!(error instanceof ServiceError && error.code === "no_such_ask")) return error instanceof Error ? error.message : String(error);
      }
    }
    return offers.length ? "every matching offer was taken meanwhile" : `no offer matches ${JSON.stringify(group.searchParams)} with ${group.gpuRam} GB of GPU memory`;
  }

  /** The ready workers of an endpoint that `/route/` may send a request to, and their URLs. */
  private routeCandidates(endpoint: EndpointRecord): { worker: WorkerRecord; url: string; outdated: boolean }[] {
    const groups = new Map(this.serverless.groupsOf(endpoint.id).map((g) => [g.id, g]));
    return this.serverless
      .workersOf({ endpointId: endpoint.id })
      .filter((w) => !w.retiring)
      .map((worker) => ({ worker, state: this.autoscaler.stateOf(worker, groups.get(worker.groupId)) }))
      .filter(({ state }) => state === "ready" || state === "updating")
      .map(({ worker, state }) => ({ worker, url: this.workerUrl(worker), outdated: state === "updating" }));
  }

  /** Where a worker serves: its model server's port as published on its public address (the worker port of its template). */
  workerUrl(worker: WorkerRecord): string {
    const instance = this.instances.byId(worker.instanceId);
    if (!instance) return "";
    const host = instance.sshEndpoint?.host ?? instance.publicIp;
    const port = workerPort(instance);
    // Where its machine publishes the port while it runs (on loopback), else the port as rented.
    const published = port && (instance.publishedPorts?.[port] ?? instance.ports[port][0].HostPort);
    return published ? `http://${host}:${published}` : `http://${host}`;
  }

  /** Deletes an endpoint with its groups, and destroys their workers' instances: answers those instances. */
  removeEndpoint(ownerId: number, endpointId: number): number[] {
    const workers = this.serverless.deleteEndpoint(ownerId, endpointId);
    this.router.forget({ endpointId });
    for (const worker of workers) {
      this.router.forget({ workerId: worker.instanceId });
      const instance = this.instances.byId(worker.instanceId);
      if (instance) this.instances.destroy(instance);
    }
    return workers.map((w) => w.instanceId);
  }

  private templateHash(ownerId: number, by: { hash?: string; id?: number }): string {
    if (by.hash !== undefined) return this.templates.resolve(ownerId, by.hash).hash_id;
    const found = this.templates.search(ownerId, { id: { eq: by.id } })[0];
    if (!found) throw notFound("no_such_template", `No template with id ${by.id}. Search the templates for its numeric id.`);
    return found.hash_id;
  }

}

/** Parts of the state that saves from before they existed lack: such a save restores them empty. */
const ADDED_LATER = new Set(["serverless", "deployments"]);

/** The subject and message of an instance's event, as a webhook delivery carries them. */
function eventText(id: number, event: InstanceEvent): [string, string] {
  const text: Record<InstanceEvent, [string, string]> = {
    outbid: ["Instance outbid", `Instance ${id} was outbid and stopped: raise its bid to run it again.`],
    started: ["Instance started", `Instance ${id} is starting.`],
    stopped: ["Instance stopped", `Instance ${id} was stopped.`],
    deleted: ["Instance deleted", `Instance ${id} was destroyed.`],
  };
  return text[event];
}
