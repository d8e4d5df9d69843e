import { z } from "zod";
import { EndpointTargets } from "./serverless";

/**
 * Deployments (docs/service-facts.md#deployments): a named, tagged bundle of code on an image, with an endpoint and
 * a worker group made for it, versions kept as the code changes, and a time to live renewed by heartbeats. Put at
 * `PUT /api/v0/deployments/`; read, stopped, started and deleted at `/api/v0/deployment/{id}/...`.
 */

// eslint-disable-next-line no-control-regex
const Name = z.string().min(1).max(128).regex(/^[^\u0000-\u001f\u007f/]*$/, "a name has no control characters nor /");

/** The scaling a deployment's endpoint takes: the endpoint's targets (its name is the deployment's). */
export const DeploymentScaling = EndpointTargets.omit({ endpoint_name: true });
export type DeploymentScaling = z.infer<typeof DeploymentScaling>;

/** `PUT /api/v0/deployments/`: the deployment's configuration, as the public client's `DeploymentConfig` sends it. */
export const PutDeploymentRequest = DeploymentScaling.extend({
  name: Name,
  /** The image its workers run, `repo/name:tag`. */
  image: z.string().min(1).max(512),
  /** The content hash of the bundle (hex SHA-256 of its sources): a new hash is a new version. */
  file_hash: z.string().regex(/^[0-9a-f]{64}$/, "file_hash is the bundle's SHA-256, 64 hex digits"),
  /** The bundle's size in bytes. */
  file_size: z.number().int().positive(),
  /** Docker flags of its workers (`-p 3000:3000/tcp -e K=V`). */
  env: z.string().max(8192).optional(),
  tag: Name.optional(),
  /** Offer criteria of its workers, the CLI's text (`gpu_name=RTX_4090 num_gpus>=1`). */
  search_params: z.string().max(4096).optional(),
  /** Disk of each worker, GB. */
  storage: z.number().positive().max(100_000).optional(),
  /** Seconds the deployment lives without a heartbeat; none: for ever. */
  ttl: z.number().positive().optional(),
  version_label: z.string().max(256).optional(),
  docker_login_user: z.string().max(256).optional(),
  docker_login_pass: z.string().max(4096).optional(),
  docker_login_repo: z.string().max(512).optional(),
  autoscaler_instance: z.string().max(64).optional(),
});
export type PutDeploymentRequest = z.infer<typeof PutDeploymentRequest>;

/** What a put did: made it, a new version of its code, new scaling, or nothing (all as it was). */
export const DEPLOYMENT_ACTIONS = ["created", "soft_update", "autoscale_update", "exists"] as const;
export type DeploymentAction = (typeof DEPLOYMENT_ACTIONS)[number];

export const PutDeploymentResponse = z.looseObject({
  success: z.boolean(),
  action: z.enum(DEPLOYMENT_ACTIONS),
  deployment_id: z.number().int(),
  endpoint_id: z.number().int(),
  workergroup_id: z.number().int().nullish(),
  /** Where the bundle goes (a form POST of `upload_fields` and `file`), when the service does not hold it yet. */
  upload_url: z.string().nullish(),
  upload_fields: z.record(z.string(), z.string()).nullish(),
  /** Versions dropped to make room (their bundles gone). */
  evicted_versions: z.array(z.number().int()).nullish(),
});
export type PutDeploymentResponse = z.infer<typeof PutDeploymentResponse>;

const Nullable = <T extends z.ZodType>(schema: T) => schema.nullish();

/** A deployment as `GET /api/v0/deployment/{id}/` shows it (the listing shows the same fields). */
export const Deployment = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  tag: z.string(),
  image: z.string(),
  endpoint_id: Nullable(z.number().int()),
  endpoint_state: Nullable(z.string()),
  worker_count: Nullable(z.number().int()),
  workergroup_id: Nullable(z.number().int()),
  env: Nullable(z.string()),
  s3_key: Nullable(z.string()),
  file_hash: Nullable(z.string()),
  search_params: Nullable(z.string()),
  current_version_id: Nullable(z.number().int()),
  last_healthy_version_id: Nullable(z.number().int()),
  storage: z.number(),
  ttl: Nullable(z.number()),
  last_client_heartbeat: Nullable(z.number()),
  created_at: z.number(),
  updated_at: z.number(),
});
export type Deployment = z.infer<typeof Deployment>;

/** A version's state: its bundle awaited, rolling out, serving (healthy), refused by its workers, or dropped. */
export const VERSION_STATES = ["pending_upload", "deploying", "healthy", "failed", "evicted"] as const;
export type VersionState = (typeof VERSION_STATES)[number];

export const DeploymentVersion = z.looseObject({
  id: z.number().int(),
  deployment_id: z.number().int(),
  file_hash: z.string(),
  file_size: z.number().int(),
  version_label: Nullable(z.string()),
  status: z.enum(VERSION_STATES),
  s3_key: Nullable(z.string()),
  error: Nullable(z.string()),
  created_at: z.number(),
});
export type DeploymentVersion = z.infer<typeof DeploymentVersion>;

export const DeploymentListResponse = z.looseObject({ success: z.boolean().optional(), deployments: z.array(Deployment) });
export const DeploymentResponse = z.looseObject({ success: z.boolean().optional(), deployment: Deployment });
export const DeploymentVersionsResponse = z.looseObject({ success: z.boolean(), versions: z.array(DeploymentVersion), msg: z.string().optional() });
export const DeploymentStateResponse = z.looseObject({ success: z.boolean(), endpoint_state: z.string() });
export const DeploymentDeletedResponse = z.looseObject({ success: z.boolean(), deleted: z.array(z.number().int()), msg: z.string().optional() });
export const DeploymentDownloadResponse = z.looseObject({ success: z.boolean(), download_url: z.string(), version_id: z.number().int().optional() });

/** `DELETE /api/v0/deployments/`: by name, and tag (every tag of the name without one). */
export const DeleteDeploymentByNameRequest = z.object({ name: Name, tag: Name.optional() });
