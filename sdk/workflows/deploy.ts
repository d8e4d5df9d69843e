import { GpuRentalClient } from "../client";
import { Clock, REAL_TIME } from "../clock";
import { BundleConfig, bundleFolder } from "../deployment-bundle";
import { BadRequestError, GpuRentalError, ServerError } from "../errors";
import { Deployment, DeploymentAction, DeploymentScaling, DeploymentVersion, PutDeploymentRequest, PutDeploymentResponse } from "../schemas";
import { remoteClientCriteria, remoteClientEnv, ServiceUrls } from "./remote-client";
import { WaitTimeoutError } from "./wait";

/** A deployment as code: its Python package (a folder), the image it runs on, and how it scales. */
export interface DeploymentSpec {
  name: string;
  tag?: string;
  /** The folder of its Python package (imported as `deployment` on the workers; it declares a deployment of `name`). */
  codeFolder: string;
  image: string;
  /**
   * Docker flags of its workers. Default: those the service's remote-function client compiles when given the API's
   * URL (remote-client.ts); a client given an autoscaler of another host compiles others: give them here.
   */
  env?: string;
  /** Offer criteria of its workers, the CLI's text, sent after the remote-function client's defaults. */
  searchParams?: string;
  /** Disk of each worker, GB. */
  storage?: number;
  scaling?: DeploymentScaling;
  /** Seconds it lives without a heartbeat. */
  ttl?: number;
  /** What the workers install and run before the code (the bundle's config). */
  setup?: Omit<BundleConfig, "name">;
  versionLabel?: string;
}

export interface PushOptions {
  /** Wait until the version pushed serves (a worker of it loaded). Default false. */
  wait?: boolean;
  /** How long the wait may take. Default 10 minutes. */
  timeoutMs?: number;
  pollMs?: number;
  clock?: Clock;
  /** Told each step (the bundle, the upload, the roll, the wait). */
  onProgress?: (message: string) => void;
}

export interface PushResult {
  action: DeploymentAction;
  deployment: Deployment;
  /** The bundle's content hash (a new one is a new version). */
  hash: string;
}

/** The version pushed failed on its workers: calls go to the last healthy version. */
export class DeploymentVersionFailedError extends GpuRentalError {
  override name = "DeploymentVersionFailedError";
  constructor(
    message: string,
    readonly version: DeploymentVersion,
  ) {
    super(message);
  }
}

/**
 * What a spec puts (the bundle's hash and size with it): the env flags and criteria the service's remote-function
 * client sends to the same service, so that a program of that client with the same code and settings finds this
 * deployment unchanged (docs/service-facts.md#deployments-by-name).
 */
export function putRequest(spec: DeploymentSpec, bundle: { hash: string; size: number }, urls: ServiceUrls): PutDeploymentRequest {
  return PutDeploymentRequest.parse({
    name: spec.name, tag: spec.tag, image: spec.image, env: spec.env ?? remoteClientEnv(urls), search_params: remoteClientCriteria(spec.searchParams), storage: spec.storage, ttl: spec.ttl,
    version_label: spec.versionLabel, file_hash: bundle.hash, file_size: bundle.size, ...spec.scaling,
  });
}

/**
 * Pushes the folder as the deployment's code, as the service's own client does: the bundle is made (its content
 * hash decides whether it is a new version), put, uploaded when the service asks, and after new code the group's
 * workers are rolled onto it. With `wait`, answers once the version serves; a version whose workers fail is a
 * DeploymentVersionFailedError (the last healthy version keeps serving).
 */
export async function pushDeployment(client: GpuRentalClient, spec: DeploymentSpec, options: PushOptions = {}): Promise<PushResult> {
  const say = options.onProgress ?? (() => undefined);
  const bundle = bundleFolder(spec.codeFolder, { name: spec.name, ...spec.setup });
  say(`deployment ${spec.name}: bundle of ${spec.codeFolder} made (${bundle.size} bytes, hash ${bundle.hash.slice(0, 12)})`);
  const answer = await client.deployments.put(putRequest(spec, bundle, { apiUrl: client.apiUrl }));
  if (answer.upload_url && answer.upload_fields) {
    await uploadBundle(answer, bundle.bytes);
    say(`deployment ${spec.name}: bundle uploaded`);
  }
  if (answer.action === "soft_update" && answer.workergroup_id) {
    const rolling = await client.workerGroups.rollWorkers(answer.workergroup_id);
    say(`deployment ${spec.name}: new version, ${rolling} worker(s) rolling onto it`);
  }
  let deployment = (await client.deployments.get(answer.deployment_id))!;
  if (options.wait && answer.action !== "autoscale_update") deployment = await untilServes(client, deployment, options);
  return { action: answer.action, deployment, hash: bundle.hash };
}

/** Polls until the deployment's current version is its last healthy one; a failed current version is an error. */
export async function untilServes(client: GpuRentalClient, deployment: Deployment, options: PushOptions = {}): Promise<Deployment> {
  const clock = options.clock ?? REAL_TIME;
  const deadline = clock.now() + (options.timeoutMs ?? 600_000);
  const say = options.onProgress ?? (() => undefined);
  let said = "";
  for (;;) {
    const now = (await client.deployments.get(deployment.id)) ?? deployment;
    if (now.current_version_id !== null && now.current_version_id === now.last_healthy_version_id) return now;
    const version = (await client.deployments.versions(now.id)).find((v) => v.id === now.current_version_id);
    if (version?.status === "failed") {
      throw new DeploymentVersionFailedError(`Version ${version.id} of deployment ${now.name} failed on its workers (${version.error ?? "no reason given"}); version ${now.last_healthy_version_id ?? "none"} serves. Fix the code and push again.`, version);
    }
    const status = `deployment ${now.name}: version ${now.current_version_id} ${version?.status ?? "pending"}, ${now.worker_count ?? 0} worker(s)`;
    if (status !== said) say((said = status));
    if (clock.now() >= deadline) throw new WaitTimeoutError(`Deployment ${now.name}'s version ${now.current_version_id} did not serve in time (${status}). A deployment that scales to zero serves once a request comes.`);
    await clock.sleep(options.pollMs ?? 2000);
  }
}

/**
 * Uploads the bundle a put announced where its answer says (the service's storage, not its API): a form of the
 * answer's `upload_fields` and the file, with no key, as the service's client sends it.
 */
export async function uploadBundle(answer: PutDeploymentResponse, bundle: Buffer): Promise<void> {
  if (!answer.upload_url || !answer.upload_fields) throw new BadRequestError("This put's answer asks for no upload: the service holds the bundle already.");
  const form = new FormData();
  for (const [key, value] of Object.entries(answer.upload_fields)) form.append(key, value);
  form.append("file", new Blob([new Uint8Array(bundle)], { type: "application/gzip" }), "bundle.tar.gz");
  const response = await fetch(answer.upload_url, { method: "POST", body: form });
  if (![200, 201, 204].includes(response.status)) {
    const text = (await response.text()).slice(0, 512);
    const Kind = response.status >= 500 ? ServerError : BadRequestError;
    throw new Kind(`The bundle's upload was refused (HTTP ${response.status}): ${text}`);
  }
}
