import { Connection, GpuRentalClient } from "../sdk";

/**
 * `gpu-rental logs ID`: what the instance's container printed (its onstart, its processes), or with `--daemon` the
 * service's lines about it, as the service answers them (the account: GPU_RENTAL_API_URL / GPU_RENTAL_API_KEY).
 */
export async function runLogs(id: number, options: { tail?: number; filter?: string; daemon?: boolean }, account: Connection): Promise<void> {
  const text = await new GpuRentalClient(account).instances.logs(id, options);
  process.stdout.write(text);
}
