import type { Offer } from "../../../sdk/schemas";
import { HOURS_PER_MONTH } from "../../domain/catalogue";
import { round6 } from "../../domain/volumes";
import type { VolumeRecord } from "../../domain/records";

/** What a local volume shows of its machine, as the machine's offer has it (docs/service-facts.md#records-as-the-vendor-describes-them). */
const FROM_THE_MACHINE = [
  "cpu_arch", "cpu_name", "cuda_max_good", "disk_name", "driver_version", "host_id", "inet_down", "inet_up", "mobo_name", "os_version",
  "public_ipaddr", "reliability2", "static_ip", "verification",
] as const;

/**
 * A volume as the wire shows it (`GET /api/v0/volumes/`), with its machine's fields for a local volume (`machine`, its
 * offer); a network volume's are null (a cluster, not one machine).
 */
export function volumeView(volume: VolumeRecord, machine?: Offer): Record<string, unknown> {
  return {
    id: volume.id,
    type: volume.type,
    name: volume.name,
    label: volume.name,
    disk_space: volume.size,
    ask_contract_id: volume.askId,
    machine_id: volume.machineId,
    geolocation: volume.geolocation,
    status: volume.instances.length ? "in_use" : "available",
    start_date: volume.createdAt / 1000,
    storage_cost: volume.storageCost,
    storage_cost_total: round6((volume.storageCost * volume.size) / HOURS_PER_MONTH),
    storage_total_cost: round6((volume.storageCost * volume.size) / HOURS_PER_MONTH),
    instances: [...volume.instances],
    ...Object.fromEntries(FROM_THE_MACHINE.map((field) => [field, machine?.[field] ?? null])),
  };
}
