import { offerQuery } from "../../sdk";
import { TYPE_CHECK } from "../helpers/pulumi-stack";
import { ownProgramScenario, PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "./own-program";

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { getAuditLogsOutput, getGpuPricesOutput, getOffersOutput, Instance, Template } from "gpu-rental/provider";

const config = new pulumi.Config();
const base = new Template("base", { name: "own-base", image: "nvidia/cuda", tag: "12.4.1-runtime-ubuntu22.04", runtype: "ssh", sshDirect: true, useSsh: true });
// The offer chosen by a lookup: the cheapest reliable RTX 4090 when the instance is created, pinned then (a later up
// finds another cheapest, as this one is rented: ignoreChanges keeps the instance on its own).
const cheapest = getOffersOutput({ gpuModel: "RTX 4090", filters: { reliability: { gte: 0.95 } }, limit: 1 });
const worker = new Instance("worker", { offerId: cheapest.offers[0].id, templateHashId: base.hashId, label: config.require("label") }, { ignoreChanges: ["offerId"] });

export const instanceId = worker.instanceId;
export const hashId = base.hashId;
// Once the worker exists (its id in the arguments: the lookups wait for it): how the account rented it, and what
// an RTX 4090 costs on the market now and over the last day.
const audit = getAuditLogsOutput({ route: worker.instanceId.apply(() => "/api/v0/asks/") });
export const rentedBy = audit.entries.apply((entries) => entries.map((entry) => entry.route));
const prices = getGpuPricesOutput({ gpuName: worker.instanceId.apply(() => "RTX 4090") });
export const rtx4090 = { median: prices.priceMedian, available: prices.available, points: prices.history.apply((points) => points.length) };
`;

// Type-checked by the engine, as `pulumi new typescript` programs are: the package's types must resolve there.
describe("a TypeScript program with @pulumi/pulumi 3.248.0 and the packed package, outside the repository", () => {
  ownProgramScenario(
    "own-ts",
    { "Pulumi.yaml": PROJECT("own-ts", true), "index.ts": PROGRAM, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG },
    TYPESCRIPT_PROGRAM,
    TYPE_CHECK,
    // The instance rents the offer getOffersOutput found: the one the SDK's search of the same criteria puts first.
    // getAuditLogs and getGpuPrices as a TypeScript program reads them: the rental, the market's price once it is made.
    async (emu) => {
      const [first] = await emu.client().offers.search(offerQuery({ filters: { gpu_name: { eq: "RTX 4090" }, reliability: { gte: 0.95 } }, candidatesPerSearch: 1 }));
      return async (instance, outputs) => {
        expect(instance.offer.id).toBe(first.id);
        expect(outputs.rentedBy).toEqual(["PUT /api/v0/asks/{offer_id}/"]);
        const now = (await emu.client().gpuMetrics.current({ verified: "all" })).find((row) => row.gpu_name === "RTX 4090")!;
        expect(outputs.rtx4090).toEqual({ median: now.price_median, available: now.available, points: expect.any(Number) });
      };
    },
  );
});
