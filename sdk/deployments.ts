import type { Caller } from "./call";
import { NotFoundError } from "./errors";
import {
  DeleteDeploymentByNameRequest, Deployment, DeploymentDeletedResponse, DeploymentDownloadResponse, DeploymentListResponse, DeploymentResponse,
  DeploymentStateResponse, DeploymentVersion, DeploymentVersionsResponse, PutDeploymentRequest, PutDeploymentResponse, SuccessResponse,
} from "./schemas";

/** A read or change of a deployment that is gone: null, as `get` of a thing gone answers. */
async function unlessGone<T>(change: () => Promise<T>): Promise<T | null> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/**
 * `client.deployments`: code served as a versioned serverless deployment (docs/service-facts.md#deployments). `put`
 * makes or updates one; the rest read, stop, start, renew and delete it. The bundle goes to storage, not the API
 * (sdk/workflows/deploy.ts's `uploadBundle`), which pushes a folder and waits until it serves.
 */
export function deploymentsApi(client: Caller) {
  const path = (id: number, rest = "") => `/api/v0/deployment/${id}/${rest}`;
  return {
    list: async (): Promise<Deployment[]> => (await client.call({ method: "GET", path: "/api/v0/deployments/", schema: DeploymentListResponse })).deployments,
    get: async (id: number): Promise<Deployment | null> => unlessGone(async () => (await client.call({ method: "GET", path: path(id), schema: DeploymentResponse })).deployment),
    /** Its versions, oldest first: which is healthy, which failed and why. */
    versions: async (id: number): Promise<DeploymentVersion[]> => (await client.call({ method: "GET", path: path(id, "versions/"), schema: DeploymentVersionsResponse })).versions,
    /** Makes it, or updates the one of that name and tag: `action` says what it did; `upload_url` asks for the bundle. */
    put: async (config: PutDeploymentRequest): Promise<PutDeploymentResponse> =>
      client.call({ method: "PUT", path: "/api/v0/deployments/", body: PutDeploymentRequest.parse(config), schema: PutDeploymentResponse, idempotent: true }),
    /** Renews its time to live. */
    heartbeat: async (id: number): Promise<void> => void (await client.call({ method: "POST", path: path(id, "heartbeat/"), schema: SuccessResponse, idempotent: true })),
    /** Every worker inactive (the deployment stays); answers the endpoint's state. */
    stop: async (id: number): Promise<string> => (await client.call({ method: "POST", path: path(id, "stop/"), schema: DeploymentStateResponse, idempotent: true })).endpoint_state,
    start: async (id: number): Promise<string> => (await client.call({ method: "POST", path: path(id, "start/"), schema: DeploymentStateResponse, idempotent: true })).endpoint_state,
    /** Where the bundle of the version that serves can be fetched (with no key). */
    downloadUrl: async (id: number): Promise<string> => (await client.call({ method: "GET", path: path(id, "download_url/"), schema: DeploymentDownloadResponse })).download_url,
    /** Deletes it with its endpoint, group and workers; null when it was gone already. */
    delete: async (id: number): Promise<number[] | null> =>
      unlessGone(async () => (await client.call({ method: "DELETE", path: path(id), schema: DeploymentDeletedResponse, idempotent: true })).deleted),
    /** Deletes those of that name (and tag; every tag without one); null when none was there. */
    deleteByName: async (name: string, tag?: string): Promise<number[] | null> =>
      unlessGone(async () => (await client.call({ method: "DELETE", path: "/api/v0/deployments/", body: DeleteDeploymentByNameRequest.parse({ name, tag }), schema: DeploymentDeletedResponse, idempotent: true })).deleted),
  };
}
