import { DocMachine, pageScript, portIsFree, scriptOfPage } from "../languages/doc-program";

/**
 * The page's instance: its lifetime (long enough for `up`, `spend` and `sweep --dry-run` to end before it does, on a
 * machine busy with the whole suite), and the emulator's boot (`gpu-rental emulator`'s defaults, 2 s + 5 s).
 */
const LIFETIME_S = 20;
const BOOT_S = 7;
/** The watchdog wakes at the deadline (to the second), then calls the service: its check and its call. */
const CHECK_S = 5;

/**
 * docs/spend-guard.md's "Try it against the emulator", as printed, on a user's machine with no `pulumi` installed:
 * an instance with a lifetime ends itself within its lifetime (counted from its boot) plus one check; `spend` lists
 * it running, then ended; `sweep --dry-run` would destroy it; refresh drops it from the stack.
 */
it("docs/spend-guard.md's instance with a lifetime ends itself in time, each command as printed", async () => {
  const page = pageScript("docs/spend-guard.md", ["Try it against the emulator"]);
  expect(scriptOfPage(page)).toMatch(new RegExp(`maxLifetime: "${LIFETIME_S}s"`));
  expect(await portIsFree(8767)).toBe(true);
  const machine = await DocMachine.start("spend-guard");
  try {
    const output = await machine.followPage(page);
    expect(output).not.toMatch(/EBADENGINE/);
    expect(output).toMatch(/\+ 2 created/);
    expect(output).toMatch(new RegExp(`lifetime\\s*:\\s*"maxLifetime ${LIFETIME_S}s, then destroy"`));
    const id = Number(/instanceId\s*:\s*(\d+)/.exec(output)?.[1]);
    // The first spend, right after up: running, labelled, made by gpu-rental; the sweep would take it.
    expect(output).toMatch(new RegExp(`^${id}\\s+train\\s+\\S+\\s+gpu-rental\\s+running\\s`, "m"));
    expect(output).toMatch(new RegExp(`would destroy: instance ${id} \\(token \\S+\\) label "train"`));
    // After the wait: ended, by its own watchdog, within its lifetime and one check of its boot.
    expect(output).toMatch(new RegExp(`^${id}\\s+-\\s+-\\s+-\\s+ended \\d{4}-`, "m"));
    expect(output).toMatch(/^TOTAL\s+0 live/m);
    const report = JSON.parse(/^\{\n {2}"instances"[\s\S]*?^\}$/m.exec(output)![0]);
    const line = report.instances.find((l: { id: number }) => l.id === id);
    expect(line).toMatchObject({ state: "ended", pricePerHour: 0 });
    console.log(`the instance ended ${line.ageSeconds.toFixed(1)} s after it was created (boot ${BOOT_S} s, lifetime ${LIFETIME_S} s)`);
    expect(line.ageSeconds).toBeGreaterThanOrEqual(LIFETIME_S);
    expect(line.ageSeconds).toBeLessThanOrEqual(BOOT_S + LIFETIME_S + CHECK_S);
    // refresh found it gone and dropped it; destroy had nothing left to delete but the stack.
    expect(output).toMatch(/- 1 deleted/);
    expect(await portIsFree(8767)).toBe(true);
  } finally {
    await machine.close();
  }
}, 600_000);
