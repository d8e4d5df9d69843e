import type { FastifyInstance } from "fastify";
import {
  DeleteDeploymentByNameRequest, DeploymentDeletedResponse, DeploymentDownloadResponse, DeploymentListResponse, DeploymentResponse,
  DeploymentStateResponse, DeploymentVersionsResponse, PutDeploymentRequest, PutDeploymentResponse, SuccessResponse,
} from "../../sdk/schemas";
import { s3Key } from "../domain/deployments";
import { ServiceError } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import type { DeploymentRecord, DeploymentVersionRecord } from "../domain/records";
import { readForm } from "./multipart";
import { idParam, route } from "./routes";

/** Where the emulator takes bundle uploads and serves bundles: its own host, as the service's storage is its own. */
export const UPLOAD_PATH = "/deployment-uploads/";
const BUNDLE_PATH = "/deployment-bundles/";
/** The largest bundle taken. */
const MAX_BUNDLE_BYTES = 64 << 20;

/**
 * A root certificate of the emulator's own (its key was thrown away: it signs nothing). The public client fetches
 * the service's root certificate from the console's host before its first call (docs/service-facts.md#deployments);
 * the emulator serves over HTTP, so the certificate is only read, never used.
 */
const ROOT_CERTIFICATE = [
  "-----BEGIN CERTIFICATE-----",
  "MIIByjCCAW+gAwIBAgIUcknT4c9zCgZ4zzcO+1YIuEXn9RwwCgYIKoZIzj0EAwIw",
  "MTEvMC0GA1UEAwwmZ3B1LXJlbnRhbCBlbXVsYXRvciByb290IChubyBrZXkga2Vw",
  "dCkwIBcNMjYxMjA1MDcyMTE4WhgPMjEyNjExMTEwNzIxMThaMDExLzAtBgNVBAMM",
  "JmdwdS1yZW50YWwgZW11bGF0b3Igcm9vdCAobm8ga2V5IGtlcHQpMFkwEwYHKoZI",
  "zj0CAQYIKoZIzj0DAQcDQgAEKFv/V8Rq1RRMQtiCaq2SlbKM7r7XM6yyVZYeKHkO",
  "/Uhz8VutSzsKIxizrkyuc39+uN+QE/ivSf2FfAi/q8cb1qNjMGEwHQYDVR0OBBYE",
  "FCyEyryrjfB3E7UdpEHfSVbux7w2MB8GA1UdIwQYMBaAFCyEyryrjfB3E7UdpEHf",
  "SVbux7w2MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49",
  "BAMCA0kAMEYCIQCm/bvdEzDIyT8Vu44Gw42o5Km+0hNOTpmdscvrAD6rAwIhAM98",
  "JBjCAKlzRpWK8tv5U1Av+wykS6X/tI+9s0qcCoS1",
  "-----END CERTIFICATE-----",
].join("\n") + "\n";

const secondsOf = (ms: number) => ms / 1000;

/** A deployment as the service shows it (GET /api/v0/deployment/{id}/ and the listing). */
function deploymentView(market: Marketplace, d: DeploymentRecord) {
  const endpoint = market.deployments.endpointOf(d);
  const current = market.deployments.version(d.currentVersionId);
  return {
    id: d.id, name: d.name, tag: d.tag, image: d.image, env: d.env, search_params: d.searchParams, storage: d.storage,
    endpoint_id: endpoint?.id ?? null, endpoint_state: endpoint?.state ?? null, workergroup_id: d.groupId,
    worker_count: market.serverless.workersOf({ groupId: d.groupId }).filter((w) => !w.retiring).length,
    file_hash: current?.fileHash ?? null, s3_key: current ? s3Key(current) : null,
    current_version_id: d.currentVersionId, last_healthy_version_id: d.lastHealthyVersionId,
    ttl: d.ttl, last_client_heartbeat: secondsOf(d.lastHeartbeatAt), created_at: secondsOf(d.createdAt), updated_at: secondsOf(d.updatedAt),
  };
}

const versionView = (v: DeploymentVersionRecord) => ({
  id: v.id, deployment_id: v.deploymentId, file_hash: v.fileHash, file_size: v.fileSize, version_label: v.label,
  status: v.status, s3_key: v.bundle === null && v.status === "evicted" ? null : s3Key(v), error: v.error, created_at: secondsOf(v.createdAt),
});

const PUT_RULES =
  "search_params are the CLI's criteria text and env docker flags (invalid_args otherwise); a deployment is one per name and tag: " +
  "new code (file_hash) or a new image, env, criteria or storage is a new version (soft_update), new scaling alone an autoscale_update";

/**
 * Deployments (emulator/DEPLOYMENTS.md): the put, reads, versions, heartbeats, stop and start, deletion; the
 * bundle's upload form and its download, which the emulator serves itself; the root certificate the client reads.
 */
export function registerDeployments(app: FastifyInstance, market: Marketplace): void {
  const { deployments } = market;
  const base = () => market.autoscalerUrl ?? "";

  route(app, market, {
    method: "PUT", url: "/api/v0/deployments/", permission: "misc", body: PutDeploymentRequest, response: PutDeploymentResponse, rules: PUT_RULES,
    handler: ({ principal, body }) => {
      const outcome = deployments.put(principal.user.id, body);
      market.autoscaler.tick();
      const { deployment, upload } = outcome;
      return {
        success: true, action: outcome.action, deployment_id: deployment.id, endpoint_id: deployment.endpointId, workergroup_id: deployment.groupId,
        ...(upload && { upload_url: `${base()}${UPLOAD_PATH}`, upload_fields: { key: s3Key(upload), token: upload.uploadToken! } }),
        ...(outcome.evicted.length && { evicted_versions: outcome.evicted }),
      };
    },
  });
  route(app, market, {
    method: "GET", url: "/api/v0/deployments/", permission: "misc", response: DeploymentListResponse,
    handler: ({ principal }) => ({ success: true, deployments: deployments.of(principal.user.id).map((d) => deploymentView(market, d)) }),
  });
  route(app, market, {
    method: "DELETE", url: "/api/v0/deployments/", permission: "misc", body: DeleteDeploymentByNameRequest, response: DeploymentDeletedResponse, refusals: ["not_found"],
    handler: ({ principal, body }) => {
      const deleted = deployments.deleteByName(principal.user.id, body.name, body.tag);
      return { success: true, deleted, msg: `Deleted deployment${deleted.length === 1 ? "" : "s"} ${deleted.join(", ")}` };
    },
  });
  route(app, market, {
    method: "GET", url: "/api/v0/deployment/:id/", permission: "misc", response: DeploymentResponse, refusals: ["not_found"],
    handler: ({ principal, params }) => ({ success: true, deployment: deploymentView(market, deployments.get(principal.user.id, idParam(params, "id"))) }),
  });
  route(app, market, {
    method: "DELETE", url: "/api/v0/deployment/:id/", permission: "misc", response: DeploymentDeletedResponse, refusals: ["not_found"],
    handler: ({ principal, params }) => {
      const id = deployments.delete(principal.user.id, idParam(params, "id"));
      return { success: true, deleted: [id], msg: `Deleted deployment ${id}` };
    },
  });
  route(app, market, {
    method: "GET", url: "/api/v0/deployment/:id/versions/", permission: "misc", response: DeploymentVersionsResponse, refusals: ["not_found"],
    handler: ({ principal, params }) => {
      const deployment = deployments.get(principal.user.id, idParam(params, "id"));
      return { success: true, versions: deployments.versionsOf(deployment.id).map(versionView) };
    },
  });
  for (const [verb, state] of [["stop", "stopped"], ["start", "active"]] as const) {
    route(app, market, {
      method: "POST", url: `/api/v0/deployment/:id/${verb}/`, permission: "misc", response: DeploymentStateResponse, refusals: ["not_found"],
      handler: ({ principal, params }) => {
        const endpointState = deployments.setState(principal.user.id, idParam(params, "id"), state);
        market.autoscaler.tick();
        return { success: true, endpoint_state: endpointState };
      },
    });
  }
  route(app, market, {
    method: "POST", url: "/api/v0/deployment/:id/heartbeat/", permission: "misc", response: SuccessResponse, refusals: ["not_found"],
    handler: ({ principal, params }) => {
      deployments.heartbeat(principal.user.id, idParam(params, "id"));
      return { success: true };
    },
  });
  route(app, market, {
    method: "GET", url: "/api/v0/deployment/:id/download_url/", permission: "misc", instanceKey: true, response: DeploymentDownloadResponse, refusals: ["not_found"],
    rules: "a worker (its instance's key) gets the bundle of the version its group runs; an account key the version that serves",
    handler: ({ principal, params }) => {
      const instanceId = principal.key.instanceId;
      const worker = instanceId === undefined ? undefined : market.serverless.worker(instanceId);
      const version = deployments.downloadable(principal.user.id, idParam(params, "id"), worker);
      return { success: true, download_url: `${base()}${BUNDLE_PATH}${version.id}/${version.downloadToken}/bundle.tar.gz`, version_id: version.id };
    },
  });

  // The upload form, without a key (its fields carry the secret), as to the service's storage.
  app.register(async (scope) => {
    scope.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit: MAX_BUNDLE_BYTES + (1 << 20) }, (_request, body, done) => done(null, body));
    scope.post(UPLOAD_PATH, async (request, reply) => {
      const form = readForm(request.headers["content-type"] ?? "", request.body as Buffer);
      if (!form?.files.file) throw new ServiceError("bad_request", "invalid_upload", "The upload is a multipart form of the put's upload_fields and the bundle as `file`.");
      deployments.upload(form.fields, form.files.file);
      await market.commit();
      return reply.status(204).send();
    });
  });
  app.get(`${BUNDLE_PATH}:version/:token/bundle.tar.gz`, async (request, reply) => {
    const { version, token } = request.params as { version: string; token: string };
    const bundle = /^\d{1,12}$/.test(version) ? deployments.bundle(Number(version), token) : undefined;
    if (!bundle) return reply.status(403).type("application/json").send({ success: false, error: "forbidden", msg: "No bundle at this address: ask for a download URL again." });
    return reply.type("application/gzip").send(bundle);
  });
  app.get("/static/jvastai_root.cer", async (_request, reply) => reply.type("application/x-x509-ca-cert").send(ROOT_CERTIFICATE));
}
