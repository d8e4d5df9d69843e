import { randomBytes } from "node:crypto";
import type { CreateInstanceRequest, DeploymentAction, DeploymentScaling, PutDeploymentRequest } from "../../sdk/schemas";
import { envFromFlags } from "./docker-flags";
import { badRequest, notFound } from "./errors";
import type { Persistent } from "./persistence";
import { checkedCriteria, Serverless } from "./serverless";
import { bundleProblem } from "../../sdk/deployment-bundle";
import type { DeploymentRecord, DeploymentVersionRecord, EndpointRecord, WorkerGroupRecord, WorkerRecord } from "./records";

/**
 * Deployments (emulator/DEPLOYMENTS.md, docs/service-facts.md#deployments): a named, tagged bundle of code on an
 * image, served by an endpoint and a worker group made for it. A put with new code makes a version whose bundle the
 * client uploads; its workers fetch the bundle of the version their group runs. A version whose workers serve is
 * healthy; one whose workers fail never serves: the group goes back to the last healthy version.
 */

/** Versions kept with their bundles; older ones are evicted (the current and the last healthy never). */
export const KEPT_VERSIONS = 5;
/** Where a deployment's worker finds the vendor's worker program (its image's; emulator/sandbox/worker-sdk.ts). */
export const WORKER_SDK_INSIDE = "/opt/vastai-worker";
/** The container port the vendor's worker program serves on (its `WORKER_PORT`). */
export const DEPLOYMENT_WORKER_PORT = 3000;
/** The criteria the public client sends by default, where a put names none. */
const DEFAULT_CRITERIA = "verified=true rentable=true rented=false";
/** The scaling fields a put may carry, as the endpoint keeps them. */
const SCALING: (keyof DeploymentScaling)[] = ["min_load", "min_cold_load", "target_util", "cold_mult", "cold_workers", "max_workers", "max_queue_time", "target_queue_time", "inactivity_timeout"];

export interface DeploymentsSnapshot {
  deployments: DeploymentRecord[];
  versions: DeploymentVersionRecord[];
  nextId: number;
  nextVersionId: number;
}

export interface DeploymentsDeps {
  now(): number;
  serverless: Serverless;
  /** Deletes the endpoint (and its group), destroying its workers' instances. */
  removeEndpoint(ownerId: number, endpointId: number): void;
  /** Whether a worker has served (its model loaded), or failed (and why). */
  workerHealth(worker: WorkerRecord): { loaded: boolean; error?: string };
}

export interface PutOutcome {
  action: DeploymentAction;
  deployment: DeploymentRecord;
  /** The version whose bundle the client is to upload (none when the service holds it). */
  upload?: DeploymentVersionRecord;
  evicted: number[];
}

export class Deployments implements Persistent<DeploymentsSnapshot> {
  private deployments = new Map<number, DeploymentRecord>();
  private versions = new Map<number, DeploymentVersionRecord>();
  private nextId = 501;
  private nextVersionId = 1;

  constructor(private readonly deps: DeploymentsDeps) {}

  of(ownerId: number): DeploymentRecord[] {
    return [...this.deployments.values()].filter((d) => d.ownerId === ownerId);
  }

  all(): DeploymentRecord[] {
    return [...this.deployments.values()];
  }

  get(ownerId: number, id: number): DeploymentRecord {
    const found = this.deployments.get(id);
    if (!found || found.ownerId !== ownerId) throw notFound("no_such_deployment", `No deployment ${id} in this account. List them (GET /api/v0/deployments).`);
    return found;
  }

  versionsOf(deploymentId: number): DeploymentVersionRecord[] {
    return [...this.versions.values()].filter((v) => v.deploymentId === deploymentId).sort((a, b) => a.id - b.id);
  }

  version(id: number): DeploymentVersionRecord | undefined {
    return this.versions.get(id);
  }

  /** The deployment whose group this is, if any. */
  ofGroup(group: WorkerGroupRecord): DeploymentRecord | undefined {
    return group.deploymentId === undefined ? undefined : this.deployments.get(group.deploymentId);
  }

  /**
   * `PUT /api/v0/deployments/`: makes the deployment (its endpoint and group with it), or, for one of that name and
   * tag, a new version when its code or what its workers run changed, new scaling in place, or nothing.
   */
  put(ownerId: number, request: PutDeploymentRequest): PutOutcome {
    const tag = request.tag ?? "default";
    const criteria = checkedCriteria(request.search_params ?? DEFAULT_CRITERIA);
    envFromFlags(request.env ?? ""); // a flag string the service would refuse is refused before anything is made
    const found = this.of(ownerId).find((d) => d.name === request.name && d.tag === tag);
    if (!found) return this.create(ownerId, request, tag, criteria);
    const now = this.deps.now();
    found.lastHeartbeatAt = now;
    if (request.ttl !== undefined) found.ttl = request.ttl;
    const scaled = this.rescale(found, request);
    const current = this.versions.get(found.currentVersionId)!;
    const runs = { image: request.image, env: request.env ?? "", searchParams: criteria, storage: request.storage ?? found.storage };
    const runChanged = runs.image !== found.image || runs.env !== found.env || runs.searchParams !== found.searchParams || runs.storage !== found.storage;
    if (request.file_hash === current.fileHash && !runChanged) {
      found.updatedAt = scaled ? now : found.updatedAt;
      // A bundle announced but never uploaded is asked for again.
      const upload = current.status === "pending_upload" ? current : undefined;
      return { action: scaled ? "autoscale_update" : "exists", deployment: found, upload, evicted: [] };
    }
    Object.assign(found, runs, { imageLogin: loginOf(request) ?? found.imageLogin, updatedAt: now });
    const group = this.deps.serverless.groupById(found.groupId);
    if (group) group.searchParams = criteria;
    const version = this.newVersion(found, request);
    found.currentVersionId = version.id;
    return { action: "soft_update", deployment: found, upload: version.status === "pending_upload" ? version : undefined, evicted: this.evict(found) };
  }

  private create(ownerId: number, request: PutDeploymentRequest, tag: string, criteria: string): PutOutcome {
    const { serverless } = this.deps;
    const now = this.deps.now();
    const scaling = Object.fromEntries(SCALING.filter((k) => request[k] !== undefined).map((k) => [k, request[k]]));
    const endpoint = serverless.createEndpoint(ownerId, { ...scaling, endpoint_name: endpointName(request.name, tag) });
    const id = this.nextId++;
    const group = serverless.createDeploymentGroup(ownerId, endpoint.id, id, criteria);
    const deployment: DeploymentRecord = {
      id, ownerId, name: request.name, tag, image: request.image, env: request.env ?? "", searchParams: criteria,
      storage: request.storage ?? 50, ttl: request.ttl ?? null, lastHeartbeatAt: now, imageLogin: loginOf(request),
      endpointId: endpoint.id, groupId: group.id, currentVersionId: 0, lastHealthyVersionId: null, groupVersions: {},
      createdAt: now, updatedAt: now,
    };
    this.deployments.set(id, deployment);
    const version = this.newVersion(deployment, request);
    deployment.currentVersionId = version.id;
    return { action: "created", deployment, upload: version, evicted: [] };
  }

  /** The endpoint's scaling from the put: answers whether any changed. */
  private rescale(deployment: DeploymentRecord, request: PutDeploymentRequest): boolean {
    const endpoint = this.endpointOf(deployment);
    if (!endpoint) return false;
    const change = Object.fromEntries(SCALING.filter((k) => request[k] !== undefined && request[k] !== scalingOf(endpoint)[k]).map((k) => [k, request[k]]));
    if (!Object.keys(change).length) return false;
    this.deps.serverless.updateEndpoint(deployment.ownerId, endpoint.id, change);
    return true;
  }

  /** A version of the code put; a bundle of the same hash the deployment still holds is reused, not uploaded again. */
  private newVersion(deployment: DeploymentRecord, request: PutDeploymentRequest): DeploymentVersionRecord {
    const held = this.versionsOf(deployment.id).find((v) => v.fileHash === request.file_hash && v.bundle !== null);
    const version: DeploymentVersionRecord = {
      id: this.nextVersionId++, deploymentId: deployment.id, fileHash: request.file_hash, fileSize: request.file_size,
      label: request.version_label ?? null, status: held ? "deploying" : "pending_upload", error: null,
      uploadToken: held ? null : randomBytes(24).toString("hex"), downloadToken: randomBytes(24).toString("hex"),
      bundle: held?.bundle ?? null, createdAt: this.deps.now(),
    };
    this.versions.set(version.id, version);
    return version;
  }

  /** Drops the bundles of the oldest versions beyond those kept, never the current, the last healthy, or one a worker runs. */
  private evict(deployment: DeploymentRecord): number[] {
    const group = this.deps.serverless.groupById(deployment.groupId);
    const workers = group ? this.deps.serverless.workersOf({ groupId: group.id }) : [];
    const running = new Set(workers.map((w) => this.runningVersion(group!, w.version)?.id));
    const kept = this.versionsOf(deployment.id).filter((v) => v.status !== "evicted");
    const evicted: number[] = [];
    for (const version of kept.slice(0, Math.max(0, kept.length - KEPT_VERSIONS))) {
      if (version.id === deployment.currentVersionId || version.id === deployment.lastHealthyVersionId || running.has(version.id)) continue;
      Object.assign(version, { status: "evicted", bundle: null, uploadToken: null });
      evicted.push(version.id);
    }
    return evicted;
  }

  /**
   * The bundle's upload (a form with the answer's fields and `file`): it must be the bundle the put announced, its
   * size and content hash; a refused upload changes nothing.
   */
  upload(fields: Record<string, string>, file: Buffer): DeploymentVersionRecord {
    const version = [...this.versions.values()].find((v) => v.uploadToken !== null && v.uploadToken === fields.token);
    if (!version || s3Key(version) !== fields.key) throw badRequest("invalid_upload", "This upload form is not one the service issued, or its bundle was already uploaded: put the deployment again for a new one.");
    if (file.length !== version.fileSize) throw badRequest("invalid_upload", `The bundle is ${file.length} bytes; the put announced ${version.fileSize}. Upload the bundle the put described.`);
    const problem = bundleProblem(file, version.fileHash);
    if (problem) throw badRequest("invalid_upload", `Not the bundle the put announced: ${problem}.`);
    Object.assign(version, { status: "deploying", bundle: file.toString("base64"), uploadToken: null });
    return version;
  }

  /** The version a worker of the group runs: the one its group's version was set to, else the newest runnable. */
  runningVersion(group: WorkerGroupRecord, groupVersion = group.version): DeploymentVersionRecord | undefined {
    const deployment = this.ofGroup(group);
    if (!deployment) return undefined;
    const set = deployment.groupVersions[groupVersion];
    if (set !== undefined) return this.versions.get(set);
    const current = this.versions.get(deployment.currentVersionId);
    const chosen = current && current.bundle !== null && current.status !== "failed" ? current : this.healthy(deployment);
    if (chosen && groupVersion === group.version) deployment.groupVersions[groupVersion] = chosen.id;
    return chosen;
  }

  private healthy(deployment: DeploymentRecord): DeploymentVersionRecord | undefined {
    return deployment.lastHealthyVersionId === null ? undefined : this.versions.get(deployment.lastHealthyVersionId);
  }

  /**
   * What a worker of a deployment's group is created with (the image's start runs the vendor's worker program), or
   * why none is rented now (no version has its bundle yet, or every one failed).
   */
  workerRequest(group: WorkerGroupRecord, urls: { api?: string; autoscaler?: string }): CreateInstanceRequest | string {
    const deployment = this.ofGroup(group);
    if (!deployment) return "the deployment is gone";
    const version = this.runningVersion(group);
    if (!version) return "no version of the deployment can run: its bundle is not uploaded yet, or every version failed";
    const env: Record<string, string> = {
      ...envFromFlags(deployment.env),
      [`-p ${DEPLOYMENT_WORKER_PORT}:${DEPLOYMENT_WORKER_PORT}`]: "1",
      IS_DEPLOYMENT: "true",
      DEPLOYMENT_ID: String(deployment.id),
      WORKER_PORT: String(DEPLOYMENT_WORKER_PORT),
      ...(urls.api && { VAST_API_URL: urls.api }),
      ...(urls.autoscaler && { REPORT_ADDR: urls.autoscaler }),
    };
    return {
      image: deployment.image,
      env,
      disk: deployment.storage,
      runtype: "ssh",
      onstart: WORKER_START,
      label: `deployment ${deployment.name}:${deployment.tag} worker`,
      ...(deployment.imageLogin && { image_login: deployment.imageLogin }),
    } as CreateInstanceRequest;
  }

  /** The bundle a caller fetches: a worker's (by its instance), else the version that serves. */
  downloadable(ownerId: number, id: number, worker?: WorkerRecord): DeploymentVersionRecord {
    const deployment = this.get(ownerId, id);
    const group = this.deps.serverless.groupById(deployment.groupId);
    const version = worker && group && worker.groupId === group.id ? this.runningVersion(group, worker.version) : (this.healthy(deployment) ?? this.versions.get(deployment.currentVersionId));
    if (!version?.bundle) throw notFound("no_bundle", `Deployment ${id} has no bundle to run yet: upload it (put the deployment again for an upload form).`);
    return version;
  }

  /** A bundle by its version and the secret of its download URL. */
  bundle(versionId: number, token: string): Buffer | undefined {
    const version = this.versions.get(versionId);
    return version?.bundle && version.downloadToken === token ? Buffer.from(version.bundle, "base64") : undefined;
  }

  heartbeat(ownerId: number, id: number): DeploymentRecord {
    const deployment = this.get(ownerId, id);
    deployment.lastHeartbeatAt = this.deps.now();
    return deployment;
  }

  /** Stop (every worker inactive) or start (the autoscaler manages it again): answers the endpoint's state. */
  setState(ownerId: number, id: number, state: "stopped" | "active"): string {
    const deployment = this.get(ownerId, id);
    this.deps.serverless.updateEndpoint(ownerId, deployment.endpointId, { endpoint_state: state });
    deployment.updatedAt = this.deps.now();
    return state;
  }

  /** Deletes it with its endpoint, group, workers and versions. */
  delete(ownerId: number, id: number): number {
    const deployment = this.get(ownerId, id);
    if (this.endpointOf(deployment)) this.deps.removeEndpoint(ownerId, deployment.endpointId);
    for (const version of this.versionsOf(id)) this.versions.delete(version.id);
    this.deployments.delete(id);
    return id;
  }

  /** Deletes those of that name (and tag; every tag without one). */
  deleteByName(ownerId: number, name: string, tag?: string): number[] {
    const found = this.of(ownerId).filter((d) => d.name === name && (tag === undefined || d.tag === tag));
    if (!found.length) throw notFound("no_such_deployment", `No deployment named ${JSON.stringify(name)}${tag === undefined ? "" : ` with tag ${JSON.stringify(tag)}`} in this account.`);
    return found.map((d) => this.delete(ownerId, d.id));
  }

  /**
   * Follows the workers: a version whose worker served is healthy; one whose worker failed before any served is
   * failed, and its group goes back to the last healthy version. Deployments past their time to live are deleted.
   */
  observe(): void {
    const now = this.deps.now();
    for (const deployment of this.all()) {
      if (deployment.ttl !== null && now - deployment.lastHeartbeatAt > deployment.ttl * 1000) {
        this.delete(deployment.ownerId, deployment.id);
        continue;
      }
      const group = this.deps.serverless.groupById(deployment.groupId);
      if (group) for (const worker of this.deps.serverless.workersOf({ groupId: group.id })) this.follow(deployment, group, worker);
    }
  }

  private follow(deployment: DeploymentRecord, group: WorkerGroupRecord, worker: WorkerRecord): void {
    const version = this.runningVersion(group, worker.version);
    if (!version) return;
    const { loaded, error } = this.deps.workerHealth(worker);
    if (error !== undefined && version.status !== "healthy") return this.failed(deployment, group, version, error);
    if (!loaded || error !== undefined) return;
    if (version.status !== "healthy") version.status = "healthy";
    if (deployment.lastHealthyVersionId === null || version.id > deployment.lastHealthyVersionId) deployment.lastHealthyVersionId = version.id;
  }

  private failed(deployment: DeploymentRecord, group: WorkerGroupRecord, version: DeploymentVersionRecord, error: string): void {
    if (version.status === "failed") return;
    Object.assign(version, { status: "failed", error: error.slice(0, 2000) });
    if (deployment.groupVersions[group.version] !== version.id) return;
    // Back to the last healthy version: its workers are the group's current ones again, new ones fetch its bundle.
    const healthy = this.healthy(deployment);
    if (healthy) deployment.groupVersions[group.version] = healthy.id;
    else delete deployment.groupVersions[group.version];
    for (const worker of this.deps.serverless.workersOf({ groupId: group.id })) {
      if (this.runningVersion(group, worker.version)?.id !== version.id) worker.version = group.version;
    }
  }

  endpointOf(deployment: DeploymentRecord): EndpointRecord | undefined {
    return this.deps.serverless.allEndpoints().find((e) => e.id === deployment.endpointId);
  }

  snapshot(): DeploymentsSnapshot {
    const { nextId, nextVersionId } = this;
    return structuredClone({ deployments: this.all(), versions: [...this.versions.values()], nextId, nextVersionId });
  }

  restore(data: DeploymentsSnapshot): void {
    const copy = structuredClone(data);
    this.deployments = new Map(copy.deployments.map((d) => [d.id, d]));
    this.versions = new Map(copy.versions.map((v) => [v.id, v]));
    this.nextId = copy.nextId;
    this.nextVersionId = copy.nextVersionId;
  }
}

/** Where a version's bundle is kept, as the service names it (`s3_key`). */
export function s3Key(version: DeploymentVersionRecord): string {
  return `deployments/${version.deploymentId}/${version.id}.tar.gz`;
}

/** The endpoint a deployment makes: its name and tag. */
function endpointName(name: string, tag: string): string {
  return `${name}-${tag}`.slice(0, 128);
}

function scalingOf(endpoint: EndpointRecord): DeploymentScaling {
  return {
    min_load: endpoint.minLoad, min_cold_load: endpoint.minColdLoad, target_util: endpoint.targetUtil, cold_mult: endpoint.coldMult,
    cold_workers: endpoint.coldWorkers, max_workers: endpoint.maxWorkers, max_queue_time: endpoint.maxQueueTime,
    target_queue_time: endpoint.targetQueueTime, inactivity_timeout: endpoint.inactivityTimeout ?? undefined,
  };
}

/** The image's registry login, as instance creation takes it (`-u user -p token repo`). */
function loginOf(request: PutDeploymentRequest): string | null {
  const { docker_login_user: user, docker_login_pass: pass, docker_login_repo: repo } = request;
  return user && pass ? `-u ${user} -p ${pass} ${repo ?? "docker.io"}` : null;
}

/**
 * What the image's start does for a deployment (the service's images run `serve_deployment` when
 * `IS_DEPLOYMENT=true`): the vendor's worker program, in the background (a worker serves for as long as it runs),
 * with the worker's key as its `MASTER_TOKEN`. Should it end, the worker reports the failure with its last words,
 * as the vendor's program does for a failure it catches.
 */
export const WORKER_START = `export MASTER_TOKEN="$CONTAINER_API_KEY"
mkdir -p /root/deployment && cd /root/deployment
cat > /root/.deployment-failed.py <<'PY'
import json, os, urllib.request
words = open("/root/deployment.log", errors="replace").read()[-1500:]
body = json.dumps({"id": int(os.environ["CONTAINER_ID"]), "mtoken": os.environ["CONTAINER_API_KEY"], "error_msg": "the deployment's worker exited: " + words}).encode()
url = os.environ["REPORT_ADDR"].split(",")[0].rstrip("/") + "/worker_status/"
urllib.request.urlopen(urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}))
PY
nohup sh -c '${WORKER_SDK_INSIDE}/bin/python -m vastai.serverless.remote.serve_deployment > /root/deployment.log 2>&1 || ${WORKER_SDK_INSIDE}/bin/python /root/.deployment-failed.py' > /dev/null 2>&1 &
`;
