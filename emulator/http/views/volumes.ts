import { HOURS_PER_MONTH } from "../../domain/catalogue";
import { round6 } from "../../domain/volumes";
import type { VolumeRecord } from "../../domain/records";

/** A volume as the wire shows it (`GET /api/v0/volumes/`, and the volume a creation returns). */
export function volumeView(volume: VolumeRecord): Record<string, unknown> {
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
    instances: [...volume.instances],
  };
}
