import { z } from "zod";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getGpuPrices function: a GPU model's prices on the market, now and over a period, for choosing a bid. Read-only. */

const HOUR = 3600;

const GetGpuPricesArgs = z
  .object({
    gpuName: z.string().min(1).max(100).meta({ description: "The GPU model, as the market names it (`RTX 4090`; underscores read as spaces)." }),
    hours: z.number().positive().max(24 * 90).optional().meta({ description: "How far back the history goes, hours. Default 24." }),
    stepHours: z.number().positive().max(24 * 30).optional().meta({ description: "Hours between the history's points. Default 1." }),
    verifiedOnly: z.boolean().optional().meta({ description: "Count verified machines only. Default false (all)." }),
  })
  .refine((args) => (args.hours ?? 24) / (args.stepHours ?? 1) <= 1000, { path: ["stepHours"], message: "more than 1000 points: take a larger stepHours" });
type GetGpuPricesArgs = z.infer<typeof GetGpuPricesArgs>;

const PricePoint = z.object({
  time: z.number().meta({ description: "Seconds since 1970." }),
  availableMedian: z.number().nullable().meta({ description: "The median $/GPU-hour of the offers available then; null when none was." }),
  rentedMedian: z.number().nullable().meta({ description: "The median $/GPU-hour of the offers rented then; null when none was." }),
});

const Result = z.object({
  gpuName: z.string().meta({ description: "The model." }),
  available: z.int().meta({ description: "Its offers available now." }),
  total: z.int().meta({ description: "Its offers on the market now, rented or not." }),
  priceP10: z.number().nullable().meta({ description: "Now: the 10th percentile $/GPU-hour of its available offers (a low bid's reach)." }),
  priceMedian: z.number().nullable().meta({ description: "Now: the median $/GPU-hour of its available offers." }),
  priceP90: z.number().nullable().meta({ description: "Now: the 90th percentile $/GPU-hour of its available offers." }),
  history: z.array(PricePoint).meta({ named: { name: "GpuPricePoint", description: "The model's prices at one time." }, description: "The prices over the period, oldest first." }),
});

export const GET_GPU_PRICES: LookupFunction<GetGpuPricesArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getGpuPrices",
    description:
      "A GPU model's prices on the market from the service's GPU metrics: now, the percentiles of its available offers' price per GPU-hour " +
      "and how many are available; and the medians of available and rented offers over the last `hours`, for choosing a bid.",
    args: GetGpuPricesArgs,
    result: Result,
    example: { args: { gpuName: "RTX 4090" }, exports: "priceMedian" },
  }),
  args: specOf("getGpuPrices", GetGpuPricesArgs),
  async invoke(args, op) {
    const gpuName = args.gpuName.replace(/_/g, " ");
    const end = Math.floor(Date.now() / 1000);
    const prices = await op.client.gpuMetrics.prices(gpuName, {
      start: end - Math.round((args.hours ?? 24) * HOUR),
      end,
      step: Math.max(1, Math.round((args.stepHours ?? 1) * HOUR)),
      verified: args.verifiedOnly ? "yes" : "all",
    });
    const now = prices.current;
    return {
      gpuName,
      available: now?.available ?? 0,
      total: now?.total ?? 0,
      priceP10: now?.p10 ?? null,
      priceMedian: now?.median ?? null,
      priceP90: now?.p90 ?? null,
      history: prices.history,
    };
  },
};
