/**
 * The name among `names` that `given` most likely misspells, for the "did you mean" of a refusal: the closest by
 * edit distance (a letter added, dropped or changed, or two neighbours swapped), compared without case or
 * underscores, so `max_lifetime` finds `maxLifetime` and `gpuRam` finds `gpu_ram`. None when nothing is close: at
 * most one edit in four letters (at least one, at most three).
 */
export function nearestName(given: string, names: Iterable<string>): string | undefined {
  const wanted = plain(given);
  const allowed = Math.min(3, Math.max(1, Math.floor(wanted.length / 4)));
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(wanted, plain(name));
    if (distance <= allowed && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

function plain(name: string): string {
  return name.toLowerCase().replaceAll("_", "");
}

/** Edits from `a` to `b`: insertions, deletions, substitutions, and swaps of two neighbouring letters. */
function editDistance(a: string, b: string): number {
  // rows[i][j]: the distance between the first i letters of a and the first j of b.
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
