import * as fs from "node:fs";
import * as path from "node:path";
import * as sdk from "../../sdk";
import { GpuRentalClient } from "../../sdk";

/**
 * One client shape: every endpoint is `client.<kind>.<verb>()`, with nothing flat beside it, and the SDK's
 * modules import each other without a circle. A new endpoint is one line here.
 */
const SURFACE: Record<string, string[]> = {
  offers: ["search"],
  instances: ["changeBid", "create", "deposit", "destroy", "execute", "get", "list", "logs", "prepay", "reboot", "recycle", "start", "stop", "update"],
  copies: ["cancel", "start"],
  cloudCopies: ["cancel", "connections", "start"],
  account: ["auditLogs", "ipAddresses", "transferCredit", "update"],
  notifications: ["preferences", "setPreferences", "types"],
  benchmarks: ["search"],
  gpuMetrics: ["current", "history", "locations", "prices"],
  templates: ["create", "delete", "edit", "get", "search"],
  volumes: ["createLocal", "createNetwork", "delete", "get", "list", "searchLocalOffers", "searchNetworkOffers"],
  sshKeys: ["add", "attach", "delete", "detach", "list", "ofInstance", "update"],
  apiKeys: ["create", "delete", "get", "list"],
  envVars: ["create", "delete", "list", "update"],
  priceIncreases: ["accept", "list", "reject"],
  teams: ["create", "destroy"],
  teamRoles: ["create", "delete", "get", "list", "update"],
  teamMembers: ["invite", "list", "remove"],
  subaccounts: ["create", "list"],
  webhooks: ["create", "delete", "get", "list", "rotateSecret", "test", "update"],
  endpoints: ["create", "delete", "get", "list", "logs", "update", "workers"],
  workerGroups: ["create", "delete", "get", "list", "logs", "rollWorkers", "update", "workers"],
  deployments: ["delete", "deleteByName", "downloadUrl", "get", "heartbeat", "list", "put", "start", "stop", "versions"],
  tfa: [
    "authorizeNewMethod", "confirmAuthorization", "confirmNewMethod", "login", "regenerateBackupCodes", "removeMethod", "resendSmsCode",
    "resendTestSms", "sendEmailCode", "sendSmsCode", "sendTestSms", "setupTotp", "status", "submitTestCode", "updateMethod",
  ],
  users: ["current"],
  billing: ["invoices"],
};

describe("the client's surface", () => {
  const client = new GpuRentalClient({ apiUrl: "http://127.0.0.1:9", apiKey: "surface-test" });

  it("is the namespaces and their verbs, plus apiUrl and call (the transport)", () => {
    const own = Object.keys(client).filter((key) => !["http", "options", "gate"].includes(key));
    expect(own.sort()).toEqual(["apiUrl", ...Object.keys(SURFACE)].sort());
    for (const [kind, verbs] of Object.entries(SURFACE)) {
      const namespace = (client as unknown as Record<string, Record<string, unknown>>)[kind];
      expect({ kind, verbs: Object.keys(namespace).sort() }).toEqual({ kind, verbs });
      for (const verb of verbs) expect(typeof namespace[verb]).toBe("function");
    }
    const methods = Object.getOwnPropertyNames(GpuRentalClient.prototype).filter((name) => name !== "constructor");
    expect(methods.sort()).toEqual(["call", "send"]);
  });

  it("exports no endpoint as a free function or a flat method", () => {
    const old = ["searchTemplates", "createTemplate", "listVolumes", "createNetworkVolume", "createApiKey", "listApiKeys", "addSshKey", "listInvoices", "tfaStatus", "completeTfaLogin", "templatesApi", "tfaApi"];
    for (const name of old) expect(Object.keys(sdk)).not.toContain(name);
  });

  it("has no import circle in sdk/", () => {
    const root = path.resolve(__dirname, "..", "..", "sdk");
    const files = listTs(root);
    const imports = new Map(files.map((file) => [file, importsOf(file)]));
    const state = new Map<string, "visiting" | "done">();
    const circles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") return void circles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(root, f)).join(" → "));
      state.set(file, "visiting");
      for (const next of imports.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(circles).toEqual([]);
  });
});

function listTs(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? listTs(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The sdk files a file imports (type-only imports included: a circle of types is a circle to a reader too). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  return [...text.matchAll(/(?:import|export)\s[^"';]*?from\s+"(\.[^"]+)"/g)].flatMap(([, spec]) => {
    const base = path.resolve(path.dirname(file), spec);
    return [`${base}.ts`, path.join(base, "index.ts")].filter((candidate) => fs.existsSync(candidate));
  });
}
