import { existsSync } from "node:fs";
import { z } from "zod";
import { resolve } from "node:path";
import { GpuRentalClient, sshKeyCreatedAt, volumeOfferTotalCost, volumeOfferVerified } from "../../sdk";
import { exercise } from "../helpers/exercise-client";
import { Exchange, prismJudge, PrismJudge } from "../helpers/prism";
import { endpoint, KNOWN_ELSEWHERE } from "../helpers/vendor-description";

/**
 * An outside judge made by a published tool: Prism (`@stoplight/prism-cli`) mocks the vendor's own description of the
 * live API (`../shared/real-service/vendor-openapi.yaml`, read where it lies: its licence is the vendor's terms, so
 * it is not copied into the repository) and answers every call the SDK makes. Every request must be one the
 * description accepts (Prism validates each and says what it breaks in `sl-violations`, or refuses it), and every
 * verb must read the answers Prism makes from the vendor's examples, except the disagreements below, each with its
 * evidence. Calls of endpoints the description does not have (2FA, network volumes, ...: KNOWN_ELSEWHERE, each with
 * its source) are not judged here.
 */
const SHARED = resolve(__dirname, "../../../shared");
const VENDOR = resolve(SHARED, "real-service/vendor-openapi.yaml");
const missing = existsSync(VENDOR) ? "" : ` (skipped: the vendor's description is not at ${VENDOR} on this machine)`;
if (missing) console.warn(`test/compat/prism.test.ts${missing}`);

/**
 * Verbs that do not read the description's answers, and why: each a field the SDK cannot do without, with the
 * evidence that the live service sends it, or what a mock without state cannot answer.
 */
const DISAGREEMENTS: Record<string, string> = {
  // The description's Template has `id`, `name` and `image` only; the public client 1.9.1 prints `hash_id` among a
  // template's fields (cli/commands/offers.py) and creates instances and edits templates by it, as the SDK does.
  "templates.search": "the description's templates have no hash_id, which the SDK edits and creates instances by",
  "templates.get": "the description's templates have no hash_id, which the SDK edits and creates instances by",
  // Prism answers every page with the example's `next_token`: the SDK refuses a listing whose pages come round again.
  "instances.list": "a mock without state: every page names the same next page",
  // The created endpoint's or group's id (the example's) is not in the listing's example, where the SDK reads it back.
  "endpoints.create": "a mock without state: what was created is not listed",
  "workerGroups.create": "a mock without state: what was created is not listed",
  // The answer is read (its `result_url`); the text is then fetched from that URL, the example's file on the vendor's
  // storage (docs/service-facts.md#instance-logs-and-commands), which is no endpoint of the description nor reached here.
  "instances.logs": "the text is at the answer's result_url, the example's storage URL, outside the mock",
  "instances.execute": "the output is at the answer's result_url, the example's storage URL, outside the mock",
};

/** The ids the description's examples use, so that the calls that find a thing by its id in a listing find it. */
const EXAMPLE_IDS = { endpoint: 123, workerGroup: 123 };

(missing ? describe.skip : describe)(`Prism ${require("@stoplight/prism-cli/package.json").version} mocking the vendor's description, judging the SDK${missing}`, () => {
  let judge: PrismJudge;
  /** Each verb, the exchanges it made, and how it ended. */
  const verbs: { verb: string; exchanges: Exchange[]; failure?: string }[] = [];
  const known = new Set(KNOWN_ELSEWHERE.flatMap((k) => k.endpoints.map((e) => endpoint(e.split(" ")[0], e.split(" ")[1]))));
  const described = (e: Exchange) => !known.has(endpoint(e.method, e.path));

  beforeAll(async () => {
    judge = await prismJudge(VENDOR);
    const client = new GpuRentalClient({ apiUrl: judge.url, apiKey: "prism-judged-key", retries: 0 });
    for (const [kind, ofKind] of Object.entries(exercise(client, EXAMPLE_IDS))) {
      for (const [verb, run] of Object.entries(ofKind)) {
        const from = judge.exchanges.length;
        const failure = await run().then(
          () => undefined,
          (error: Error) => error.message,
        );
        verbs.push({ verb: `${kind}.${verb}`, exchanges: judge.exchanges.slice(from), failure });
      }
    }
  }, 120_000);
  afterAll(() => judge?.stop());

  it("every request the SDK sends to a described endpoint is one the description accepts", () => {
    const refused = verbs.flatMap(({ verb, exchanges }) =>
      exchanges.filter(described).flatMap((e) => {
        const broken = e.violations.filter((v) => v.location[0] === "request").map((v) => `${v.location.join(".")}: ${v.message}`);
        if (e.problem) broken.push(`${e.problem}: ${e.detail}`);
        return broken.map((why) => `${verb}: ${e.method} ${e.path}: ${why}`);
      }),
    );
    expect(refused).toEqual([]);
    expect(verbs.flatMap((v) => v.exchanges.filter(described)).length).toBeGreaterThan(60);
  });

  it("every verb whose calls are all described reads the answers (the listed disagreements aside, each still met)", () => {
    const judged = verbs.filter((v) => v.exchanges.length > 0 && v.exchanges.every(described));
    const failed = Object.fromEntries(judged.filter((v) => v.failure !== undefined).map((v) => [v.verb, v.failure!]));
    const unlisted = Object.entries(failed).filter(([verb]) => !DISAGREEMENTS[verb]);
    expect(unlisted).toEqual([]);
    // A disagreement that no longer shows is removed from the list.
    expect(Object.keys(failed).sort()).toEqual(Object.keys(DISAGREEMENTS).sort());
    expect(judged.length - Object.keys(DISAGREEMENTS).length).toBeGreaterThan(50);
  });

  it("would see a request the description refuses, and an answer the SDK cannot read (the checks can fail)", async () => {
    const from = judge.exchanges.length;
    // A volume's deletion without the body's `id` (the SDK's former form), and a team role's change without its permissions.
    await fetch(`${judge.url}/api/v0/volumes/?id=1`, { method: "DELETE", headers: { authorization: "Bearer k" } });
    await fetch(`${judge.url}/api/v0/team/roles/4/`, { method: "PUT", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: '{"name":"x"}' });
    const seen = judge.exchanges.slice(from).map((e) => [...e.violations.filter((v) => v.location[0] === "request").map((v) => v.message), e.detail ?? ""].join(" "));
    expect(seen).toEqual([expect.stringMatching(/Body parameter is required/), expect.stringMatching(/required property 'permissions'/)]);
    // The offer search's example, read as the SDK read it before (a list only), is refused.
    const client = new GpuRentalClient({ apiUrl: judge.url, apiKey: "prism-judged-key", retries: 0 });
    const raw = await client.call({ method: "POST", path: "/api/v0/bundles/", body: {}, schema: z.looseObject({ offers: z.unknown() }) });
    expect(z.looseObject({ offers: z.array(z.unknown()) }).safeParse(raw).success).toBe(false);
  });

  it("reads the values the SDK needs from the described forms", async () => {
    const client = new GpuRentalClient({ apiUrl: judge.url, apiKey: "prism-judged-key", retries: 0 });
    const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl judge@test";
    // A local volume's answer names it `V.<id>` (the example `V.20118481`): its id is read from there.
    const [local] = await client.volumes.searchLocalOffers({ limit: 1 });
    expect((await client.volumes.createLocal({ offerId: local.ask_contract_id, size: 1 })).id).toBe(20118481);
    // Local offers are verified by `verification`, and cost `storage_total_cost`.
    expect({ verified: volumeOfferVerified(local), total: volumeOfferTotalCost(local) }).toEqual({ verified: true, total: expect.any(Number) });
    // `{workers: [...]}`, not a bare list.
    expect((await client.endpoints.workers(EXAMPLE_IDS.endpoint)).map((w) => w.status)).toEqual(["running"]);
    // A key's update answered without its id: the id is the one the path named; `created_at` as date-time text.
    expect((await client.sshKeys.update(5, KEY)).id).toBe(5);
    expect((await client.sshKeys.list()).map(sshKeyCreatedAt)).toEqual([expect.any(Number)]);
    // A worker group's criteria as text.
    expect(typeof (await client.workerGroups.list())[0].search_query).toBe("string");
  });

  it("the verbs not judged call only endpoints the description does not have, each known from elsewhere", () => {
    const notJudged = verbs.filter((v) => !v.exchanges.every(described) || v.exchanges.length === 0);
    // Each reached the mock (no verb judged by its absence), and only its undescribed calls were refused as unknown.
    for (const { verb, exchanges } of notJudged) {
      expect({ verb, reached: exchanges.length > 0 }).toEqual({ verb, reached: true });
      const unknownRoutes = exchanges.filter((e) => e.problem === "NO_PATH_MATCHED_ERROR" || e.problem === "NO_METHOD_MATCHED_ERROR");
      expect(unknownRoutes.filter(described)).toEqual([]);
    }
    expect(notJudged.map((v) => v.verb.split(".")[0])).toEqual(expect.arrayContaining(["tfa", "priceIncreases"]));
  });
});
