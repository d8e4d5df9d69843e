import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { GpuRentalClient } from "../../sdk";
import { exercise } from "../helpers/exercise-client";
import { prismJudge, PrismJudge } from "../helpers/prism";

const VENDOR = resolve(__dirname, "../../../shared/real-service/vendor-openapi.yaml");

describe("prism explore", () => {
  let judge: PrismJudge;
  beforeAll(async () => { judge = await prismJudge(VENDOR); }, 90_000);
  afterAll(() => judge?.stop());
  it("runs", async () => {
    const client = new GpuRentalClient({ apiUrl: judge.url, apiKey: "k", retries: 0 });
    const out: string[] = [];
    for (const [kind, verbs] of Object.entries(exercise(client))) {
      for (const [verb, run] of Object.entries(verbs)) {
        const from = judge.exchanges.length;
        const r = await run().then(() => "OK", (e: Error) => `FAIL ${e.message.slice(0, 300)}`);
        const ex = judge.exchanges.slice(from).map((x) => `   ${x.method} ${x.path} ${x.status} ${x.problem ?? ""} ${x.detail ?? ""} ${x.violations.map((v) => `${v.location.join(".")}:${v.message}`).join("|")}`);
        out.push(`${kind}.${verb}: ${r}\n${ex.join("\n")}`);
      }
    }
    require("fs").writeFileSync("/tmp/readers-scratch/explore.txt", out.join("\n"));
    expect(existsSync(VENDOR)).toBe(true);
  }, 120_000);
});
