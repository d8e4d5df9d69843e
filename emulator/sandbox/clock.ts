import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { INSIDE } from "./machine-setup";

/**
 * The time of an emulated machine is the emulator's clock, as the rest of its world: `date` and `sleep` on the front
 * of the machine's PATH (beside its `nvidia-smi`) read it from a file the emulator rewrites whenever its clock is
 * moved. A running clock reads as wall time plus what was advanced; a frozen one only moves when advanced, and a
 * `sleep` on the machine waits for that. So `POST /_emulator/clock/advance` moves what the machine's processes see
 * (a watchdog's lifetime, a cron-like loop) as it moves boots and billing.
 *
 * The clock file holds `running <ms>` (the offset from wall time) or `frozen <ms>` (the time itself); the machine
 * sees its folder (a file bound alone would stay the one replaced). A `sleep` in progress is listed in the machine's
 * `waits` folder, a file per process (named by its number inside the machine) holding the time it waits for, so a
 * test (or the control API's reader) knows when the machine's processes have gone back to waiting.
 */
export interface ClockReading {
  frozen: boolean;
  ms: number;
}

/** Writes the clock file atomically: a shim that reads it meanwhile sees the old reading or the new one. */
export function writeClock(file: string, reading: ClockReading): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.new`, `${reading.frozen ? "frozen" : "running"} ${Math.round(reading.ms)}\n`);
  fs.renameSync(`${file}.new`, file);
}

/** Writes the machine's `date` and `sleep` into `binDir` (made already), reading the clock where the machine sees it. */
export function installClockTools(binDir: string): void {
  const fill = (script: string) =>
    script.replaceAll("@CLOCK@", INSIDE.clock).replaceAll("@DATE@", SYSTEM.date).replaceAll("@SLEEP@", SYSTEM.sleep).replaceAll("@AT@", SYSTEM.at).replaceAll("@WAITS@", INSIDE.waits);
  for (const [name, script] of [["date", DATE], ["sleep", SLEEP]] as const) {
    const file = path.join(binDir, name);
    if (!fs.existsSync(file)) fs.writeFileSync(file, fill(NOW + script), { mode: 0o755 });
  }
}

/**
 * The emulator times (ms) the machine's `sleep`s wait for now, earliest first, from its `waits` folder: those whose
 * process (numbered inside the machine) is `alive` (one killed outright left its file).
 */
export function clockWaits(waits: string, alive: (pid: number) => boolean): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(waits);
  } catch {
    return [];
  }
  const until: number[] = [];
  for (const name of names) {
    if (!alive(Number(name))) continue;
    try {
      const ms = Number(fs.readFileSync(path.join(waits, name), "utf8").trim());
      if (Number.isFinite(ms) && ms > 0) until.push(ms);
    } catch {
      // ended meanwhile
    }
  }
  return until.sort((a, b) => a - b);
}

/**
 * The system's own date and sleep (found once), and how its date formats a given time: GNU's `-d @S`, BSD's
 * `-r S`.
 */
const SYSTEM = (() => {
  const which = (name: string) =>
    ["/bin", "/usr/bin", "/usr/local/bin"].map((dir) => path.join(dir, name)).find((file) => fs.existsSync(file)) ?? name;
  const date = which("date");
  const gnu = spawnSync(date, ["-d", "@0", "+%s"], { encoding: "utf8" }).stdout?.trim() === "0";
  return { date, sleep: which("sleep"), at: gnu ? "-d @" : "-r " };
})();

/** The machine's time in ms, from the clock file: shared by both tools. */
const NOW = `#!/bin/sh
# A tool of a gpu-rental emulated machine: its time is the emulator's clock (emulator/sandbox/clock.ts).
now_ms() {
  read mode value < '@CLOCK@'
  if [ "$mode" = frozen ]; then echo "$value"; return; fi
  wall=$('@DATE@' +%s%3N); case "$wall" in *N) wall=$(( $('@DATE@' +%s) * 1000 ));; esac
  echo $(( wall + value ))
}
`;

/** `date`: the system's, shown at the machine's time (a date it is given to show, or to set, is the system's business). */
const DATE = `case " $* " in
  *" -d"*|*" --date"*|*" -r"*|*" --reference"*|*" -s"*|*" --set"*|*" -f"*|*" --file"*) exec '@DATE@' "$@" ;;
esac
exec '@DATE@' @AT@$(( $(now_ms) / 1000 )) "$@"
`;

/**
 * `sleep`: until the machine's time has gone on by the sum of its arguments (seconds, or with s, m, h, d). It looks
 * at the clock every 0.1 s while the clock is frozen, and sleeps the wall time left (at most 1 s at a time) while it
 * runs: an advance is seen within that.
 */
const SLEEP = `ms=0
for arg in "$@"; do
  add=$(awk -v a="$arg" 'BEGIN { if (a !~ /^([0-9]+\\.?[0-9]*|\\.[0-9]+)[smhd]?$/) exit 1; u = substr(a, length(a)); m = (u == "m") ? 60 : (u == "h") ? 3600 : (u == "d") ? 86400 : 1; printf "%d", (a + 0) * m * 1000 }') || exec '@SLEEP@' "$@"
  ms=$(( ms + add ))
done
until=$(( $(now_ms) + ms ))
echo "$until" > '@WAITS@'/$$
trap 'rm -f "@WAITS@/$$"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
while :; do
  left=$(( until - $(now_ms) ))
  [ "$left" -le 0 ] && exit 0
  read mode value < '@CLOCK@'
  if [ "$mode" = frozen ]; then nap=0.1; elif [ "$left" -ge 1000 ]; then nap=1; else nap=$(awk -v l="$left" 'BEGIN { printf "%.3f", l / 1000 }'); fi
  '@SLEEP@' "$nap"
done
`;
