/** What the judges of the SDK and the emulator by the vendor's description share (test/conformance/vendor-description.test.ts, test/compat/prism.test.ts). */

/**
 * Endpoints the vendor's description (2026-08) does not have, and where each is known from: the spec, or
 * docs/service-facts.md (what the live service and its public Python client do, each with its source). A test checks
 * that each source names the path, that each is still called or served, and that none has since appeared in the description.
 */
export const KNOWN_ELSEWHERE: { source: string; endpoints: string[] }[] = [
  // The spec's 2FA endpoint table, and its deprecated paths.
  {
    source: "spec/service-api.md",
    endpoints: [
      "GET /api/v0/tfa/status/", "POST /api/v0/tfa/", "DELETE /api/v0/tfa/", "POST /api/v0/tfa/email/", "POST /api/v0/tfa/sms/",
      "POST /api/v0/tfa/sms/resend/", "POST /api/v0/tfa/authorize-new-method/", "PUT /api/v0/tfa/authorize-new-method/",
      "POST /api/v0/tfa/totp-setup/", "POST /api/v0/tfa/confirm-new/", "PUT /api/v0/tfa/update/", "PUT /api/v0/tfa/regen-backup-codes/",
      "POST /api/v0/tfa/test/", "POST /api/v0/tfa/test-submit/", "POST /api/v0/tfa/resend/",
    ],
  },
  // The spec's network volume offer search; its page went with the vendor's network-volume pages (May 2026).
  { source: "spec/service-api.md", endpoints: ["POST /api/v0/network_volumes/search/"] },
  // The retired v0 listing (410 deprecated_endpoint since 2026-08-20).
  { source: "spec/service-api.md", endpoints: ["GET /api/v0/instances/"] },
  // Network-volume creation (the vendor's page before May 2026 says `/network_volume/`, the service's client `/network_volumes/`).
  { source: "docs/service-facts.md", endpoints: ["PUT /api/v0/network_volumes/"] },
  // What the service's public Python client 1.9.1 calls.
  {
    source: "docs/service-facts.md",
    endpoints: [
      "PUT /api/v0/launch_instance/", "GET /api/v0/instances/filters/", "PUT /api/v1/template/", "GET /api/v0/gpu_names/unique/",
      "GET /api/v0/users/me/invoices/", "GET /api/v0/auth/apikeys/{id}/",
    ],
  },
  // The public client 1.9.1's `show audit-logs` (not in the vendor's description).
  { source: "docs/service-facts.md", endpoints: ["GET /api/v0/audit_logs/"] },
  // The description's `/users/{user_id}/...` as the public client 1.9.1 (and the SDK) asks it, for `me`.
  { source: "docs/service-facts.md", endpoints: ["GET /api/v0/users/me/ipaddrs/", "GET /api/v0/users/me/notification-prefs", "PUT /api/v0/users/me/notification-prefs"] },
  // The public client 1.9.1's pending price increases (not in the vendor's description).
  {
    source: "docs/service-facts.md",
    endpoints: ["GET /api/v0/instances/pending-price-increases/", "PUT /api/v0/instances/accept-price-increase/", "PUT /api/v0/instances/reject-price-increase/"],
  },
  // Serverless: one endpoint's read (the Python SDK's ManagedEndpoint), the worker-group paths the CLI 1.9.1 calls
  // (`/autojobs/`, the vendor's `/workergroups/` under another name), and the autoscaler host's calls beyond the
  // vendor's five: a group's logs as the CLI asks for them, a rolling update, and the workers' own reports.
  {
    source: "docs/service-facts.md",
    endpoints: [
      "GET /api/v0/endptjobs/{id}/", "POST /api/v0/autojobs/", "GET /api/v0/autojobs/", "PUT /api/v0/autojobs/{id}/", "DELETE /api/v0/autojobs/{id}/",
      "POST /get_autogroup_logs/", "POST /update_workers/", "POST /worker_status/", "POST /delete_requests/",
    ],
  },
  // Deployments: the paths the public client 1.9.1 calls beyond the vendor's four (the put, deletion, versions,
  // heartbeats, and its workers' download).
  {
    source: "docs/service-facts.md",
    endpoints: [
      "PUT /api/v0/deployments/", "DELETE /api/v0/deployments/", "DELETE /api/v0/deployment/{id}/", "GET /api/v0/deployment/{id}/versions/",
      "POST /api/v0/deployment/{id}/heartbeat/", "GET /api/v0/deployment/{id}/download_url/",
    ],
  },
];

/** A method and path as the description names it: no query, no final `/`, each parameter (or id) as `{}`. */
export const endpoint = (method: string, path: string) => `${method.toUpperCase()} ${path.split("?")[0].replace(/\/+$/, "").replace(/\{[^}]+\}|:\w+|\/\d+(?=\/|$)/g, (m) => (m.startsWith("/") ? "/{}" : "{}"))}`;
