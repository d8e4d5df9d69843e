import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { endpoint } from "../helpers/vendor-description";

/**
 * Every record the emulator answers carries the fields the vendor's description lists for it (docs/service-facts.md
 * #records-as-the-vendor-describes-them): each answer below, from an emulator holding one of everything, is walked
 * beside the description's schema of that answer (and, for the offer search, which the description types by its
 * example only, beside the example and the offers recorded from the live service), and every field the description
 * names must be in the emulator's record (null where it has no value).
 */
const SHARED = resolve(__dirname, "../../../shared");
const VENDOR = resolve(SHARED, "real-service/vendor-openapi.yaml");
const missing = existsSync(VENDOR) ? "" : ` (skipped: the vendor's description is not at ${VENDOR} on this machine)`;
if (missing) console.warn(`test/conformance/vendor-records.test.ts${missing}`);

type Json = Record<string, any>;

/** The answers compared: each a call of the emulator and the description's operation that answers it. */
const ANSWERS: { method: string; path: string; body?: unknown; as?: "team" }[] = [
  { method: "POST", path: "/api/v0/bundles/", body: { limit: 3 } },
  { method: "GET", path: "/api/v0/instances/{instance}/" },
  { method: "GET", path: "/api/v1/instances/" },
  { method: "POST", path: "/api/v0/volumes/search/", body: { limit: 3 } },
  { method: "GET", path: "/api/v0/volumes/" },
  { method: "GET", path: "/api/v0/ssh/" },
  { method: "GET", path: "/api/v0/auth/apikeys/" },
  { method: "GET", path: "/api/v0/template/" },
  { method: "GET", path: "/api/v0/users/current/" },
  { method: "GET", path: "/api/v0/endptjobs/" },
  { method: "GET", path: "/api/v0/workergroups/" },
  { method: "GET", path: "/api/v0/webhooks" },
  { method: "GET", path: "/api/v0/secrets/" },
  { method: "GET", path: "/api/v1/invoices/" },
  { method: "GET", path: "/api/v0/charges/" },
  { method: "GET", path: "/api/v0/subaccounts/" },
  { method: "GET", path: "/api/v0/team/roles-full/", as: "team" },
  { method: "GET", path: "/api/v0/team/members/", as: "team" },
  { method: "GET", path: "/api/v0/team/roles/{role}/", as: "team" },
];

/** The offers recorded from the live service (`vastai search offers --raw`): the fields an offer carries there. */
const RECORDED_OFFERS = resolve(SHARED, "real-service/samples/01-offers-cli-raw-rtx4090.json");

(missing ? describe.skip : describe)(`records as the vendor's description lists their fields${missing}`, () => {
  let emu: TestEmulator;
  let vendor: Json;
  let instance: number;
  /** A team account's key (a team is an account of its own: its SSH-key calls are refused, so not the seeded user). */
  let team: string;

  beforeAll(async () => {
    vendor = parseYaml(readFileSync(VENDOR, "utf8"));
    emu = await emulator();
    instance = await holdOneOfEverything(emu);
    team = emu.account("records-team@example.com").key;
    await emu.client({ apiKey: team }).teams.create("records", { transferCredit: 0 });
  });
  afterAll(() => emu.close());

  it.each(ANSWERS.map((a) => [`${a.method} ${a.path}`, a] as const))("%s", async (_, { method, path, body, as }) => {
    const url = path.replace("{instance}", String(instance)).replace("{role}", "member");
    const res = await http(emu.url, method, url, { key: as === "team" ? team : emu.apiKey, body });
    expect({ status: res.status, body: res.status === 200 ? "..." : res.body }).toEqual({ status: 200, body: "..." });
    const op = operation(vendor, endpoint(method, path));
    const content = op.responses["200"].content["application/json"];
    const absent = absentFields(vendor, content.schema, res.body, "");
    if (content.example !== undefined) absent.push(...absentFields(vendor, exampleSchema(content.example), res.body, ""));
    if (path === "/api/v0/bundles/") absent.push(...absentFields(vendor, exampleSchema({ offers: JSON.parse(readFileSync(RECORDED_OFFERS, "utf8")) }), res.body, ""));
    expect([...new Set(absent)].sort()).toEqual([]);
    // Not vacuous: the answer holds a record (a listing's row) whose fields were compared.
    expect(deepest(res.body)).toBeGreaterThanOrEqual(Array.isArray(res.body) || ["/api/v0/users/current/", "/api/v0/team/roles/{role}/"].includes(path) ? 1 : 2);
  });
});

/** The description's operation of a method and path (`{}` standing for each parameter). */
function operation(vendor: Json, wanted: string): Json {
  for (const [path, item] of Object.entries<Json>(vendor.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) if (endpoint(method, path) === wanted) return op;
  }
  throw new Error(`the vendor's description has no ${wanted}`);
}

/** A node with its reference followed, and the properties and items its alternatives declare. */
function resolved(vendor: Json, node: Json | undefined): Json {
  let at = node ?? {};
  while (at.$ref) at = at.$ref.split("/").slice(1).reduce((n: Json, key: string) => n?.[key], vendor) ?? {};
  const branches = [at, ...[...(at.allOf ?? []), ...(at.anyOf ?? []), ...(at.oneOf ?? [])].map((b: Json) => resolved(vendor, b))];
  const properties = Object.assign({}, ...branches.map((b) => b.properties ?? {}));
  const items = branches.map((b) => b.items).find((i) => i && typeof i === "object");
  return { properties, items };
}

/**
 * The fields the description names that the emulator's value leaves out, with their paths: object by object, and
 * in every item of an array.
 */
function absentFields(vendor: Json, node: Json | undefined, value: unknown, path: string): string[] {
  const { properties, items } = resolved(vendor, node);
  if (Array.isArray(value)) return items ? value.flatMap((item) => absentFields(vendor, items, item, `${path}[]`)) : [];
  if (!value || typeof value !== "object") return [];
  // An object whose keys, the description says, are there only when they have a value (a charge's metadata).
  const sparse = /only when non-null/i.test(String(node?.description ?? ""));
  return Object.entries<Json>(properties).flatMap(([name, child]) =>
    name in (value as Json) ? absentFields(vendor, child, (value as Json)[name], `${path}.${name}`) : sparse ? [] : [`${path}.${name}`],
  );
}

/** How many objects deep a value goes (a row in a listing's answer: 2; a record answered alone, or in a bare list: 1). */
function deepest(value: unknown): number {
  if (Array.isArray(value)) return Math.max(0, ...value.map(deepest));
  if (!value || typeof value !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(value).map(deepest));
}

/** A schema of the fields an example shows (an object where an array is declared stands for its items). */
function exampleSchema(example: unknown): Json {
  if (Array.isArray(example)) return { items: example.length ? exampleSchema(example[0]) : {} };
  if (!example || typeof example !== "object") return {};
  const properties = Object.fromEntries(Object.entries(example as Json).map(([name, v]) => [name, exampleSchema(v)]));
  return { properties, items: { properties } };
}

/** One of each thing an account holds, through the API as a client makes them; answers the instance's id. */
async function holdOneOfEverything(emu: TestEmulator): Promise<number> {
  const client = emu.client();
  const [offer] = await client.offers.search({ limit: 1 });
  const { new_contract: id } = await client.instances.create(offer.id, { image: "ubuntu:22.04", label: "records" });
  const [local] = await client.volumes.searchLocalOffers({ limit: 1 });
  await client.volumes.createLocal({ offerId: local.ask_contract_id, size: 1, name: "records" });
  await client.sshKeys.add("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl records@test");
  await client.apiKeys.create({ name: "records" });
  const template = await client.templates.create({ name: "records", image: "ubuntu:22.04", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
  const made = await client.endpoints.create({ endpoint_name: "records", cold_workers: 0, max_workers: 1 });
  await client.workerGroups.create({ endpoint_id: made.id, template_hash: template.hash_id });
  await client.webhooks.create({ name: "records", webhook_url: "https://hooks.example.com/records", event_types: ["client:outbid"] });
  await client.envVars.create("RECORDS", "x");
  await client.subaccounts.create({ email: "records-sub@example.com", username: "records", password: "pw-records-1" });
  emu.marketplace.clock.advance(3_600_000);
  return id;
}
