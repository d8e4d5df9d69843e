import * as fs from "node:fs";
import * as path from "node:path";
import { INSIDE } from "./machine-setup";

/**
 * The GPUs of an emulated machine, as `nvidia-smi` shows them to the machine's processes: a small shell script
 * on the front of their PATH answers the query form monitoring tools use
 * (`--query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits`, one line per GPU) and `-L`, with
 * values the control API sets per instance (default: busy). The values live in a file beside the script, so a
 * change is seen by the next call without touching the processes that run.
 */
export interface GpuReading {
  /** Per GPU, percent 0–100. */
  utilization: number[];
  /** Per GPU, MiB. */
  memoryUsedMiB: number[];
}

export interface GpuModel {
  name: string;
  count: number;
  /** Per GPU, MiB. */
  memoryTotalMiB: number;
}

/** What a machine's GPUs report until told otherwise: fully busy, most of the memory in use. */
export function busyReading(model: GpuModel): GpuReading {
  return {
    utilization: Array(model.count).fill(100),
    memoryUsedMiB: Array(model.count).fill(Math.round(model.memoryTotalMiB * 0.9)),
  };
}

/** A value for every GPU: one number for all, or one per GPU. */
export function perGpu(value: number | number[], count: number, what: string): number[] {
  if (typeof value === "number") return Array(count).fill(value);
  if (value.length !== count) throw new RangeError(`${what}: give one number, or ${count} (one per GPU of this machine), not ${value.length}`);
  return value;
}

/** Writes the machine's `nvidia-smi` and its readings into `binDir` (created); returns the folder for PATH. */
export function installNvidiaSmi(binDir: string, model: GpuModel, reading: GpuReading): string {
  fs.mkdirSync(binDir, { recursive: true });
  writeReading(binDir, model, reading);
  const script = path.join(binDir, "nvidia-smi");
  if (!fs.existsSync(script)) fs.writeFileSync(script, NVIDIA_SMI.replace("@READINGS@", `${INSIDE.bin}/gpus.csv`), { mode: 0o755 });
  return binDir;
}

/** Replaces the readings atomically: a call in progress reads the old file or the new one, never half of one. */
export function writeReading(binDir: string, model: GpuModel, reading: GpuReading): void {
  const lines = reading.utilization.map((util, index) =>
    [index, model.name, Math.round(util), Math.round(reading.memoryUsedMiB[index] ?? 0), Math.round(model.memoryTotalMiB)].join("\t"));
  const file = path.join(binDir, "gpus.csv");
  fs.writeFileSync(`${file}.new`, `${lines.join("\n")}\n`);
  fs.renameSync(`${file}.new`, file);
}

/** The script: fields index, name, utilization.gpu, memory.used, memory.total; csv with or without header and units. */
const NVIDIA_SMI = `#!/bin/sh
# nvidia-smi of a gpu-rental emulated machine: readings set through the emulator's control API.
readings='@READINGS@'
query=""; format=""
for arg in "$@"; do
  case "$arg" in
    --query-gpu=*) query="\${arg#--query-gpu=}" ;;
    --format=*) format="\${arg#--format=}" ;;
    -L|--list-gpus) awk -F '\\t' '{ printf "GPU %s: %s (UUID: GPU-emulated-%s)\\n", $1, $2, $1 }' "$readings"; exit 0 ;;
  esac
done
if [ -z "$query" ]; then
  echo "This emulated nvidia-smi answers --query-gpu=<fields> --format=csv[,noheader][,nounits] and -L only." >&2
  exit 2
fi
case "$format" in csv*) ;; *) echo "Only --format=csv is emulated." >&2; exit 2 ;; esac
awk -F '\\t' -v query="$query" -v format="$format" '
  BEGIN {
    n = split(query, fields, ","); units = index(format, "nounits") == 0
    header = ""
    for (i = 1; i <= n; i++) {
      f = fields[i]
      if (f == "index") h = "index"; else if (f == "name" || f == "gpu_name") h = "name"
      else if (f == "utilization.gpu") h = "utilization.gpu [%]"; else if (f == "memory.used") h = "memory.used [MiB]"
      else if (f == "memory.total") h = "memory.total [MiB]"
      else { print "Field \\"" f "\\" is not a valid field to query." > "/dev/stderr"; bad = 1; exit 2 }
      if (!units) sub(/ \\[.*\\]$/, "", h)
      header = header (i > 1 ? ", " : "") h
    }
    if (index(format, "noheader") == 0) print header
  }
  {
    line = ""
    for (i = 1; i <= n; i++) {
      f = fields[i]
      if (f == "index") v = $1; else if (f == "name" || f == "gpu_name") v = $2
      else if (f == "utilization.gpu") v = $3 (units ? " %" : ""); else if (f == "memory.used") v = $4 (units ? " MiB" : "")
      else v = $5 (units ? " MiB" : "")
      line = line (i > 1 ? ", " : "") v
    }
    print line
  }
' "$readings"
`;
