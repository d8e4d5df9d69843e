import * as pulumi from "@pulumi/pulumi";
import { Instance } from "gpu-rental/provider";

// An interruptible instance: cheaper, but another client who bids more takes the machine and the instance
// stops. The bid is the cap: the most this program will pay per hour.
const config = new pulumi.Config();
const bidCap = config.getNumber("bidCap") ?? 0.5;

const spot = new Instance("spot-worker", {
  gpuModel: config.get("gpuModel") ?? "RTX 4090",
  offerType: "bid",
  maxPricePerHour: bidCap,
  image: "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
  label: "spot-worker",
  // Resume work where it stopped: interruptible instances must expect to be stopped at any time.
  onstart: "python /workspace/train.py --resume",
});

export const instanceId = spot.instanceId;
export const status = spot.status;
export const bidPerHour = spot.pricePerHour;
export const bidCapPerHour = bidCap;
