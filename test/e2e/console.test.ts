/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { chromium, BrowserContext, Page } from "playwright-core";
import { Clock } from "../../emulator";
import { emulator, http as call, TestEmulator } from "../helpers/emulator";
import { emulatorProcess } from "../helpers/emulator-process";
import { REPO_ROOT, scratch } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";

/**
 * The console (docs/emulator.md, "The console") in a real browser: Debian's chromium, driven by playwright-core, on
 * an emulator with a control token, while the real engine deploys a program of 3 Instances and a GpuFleet. Everything
 * is asserted as a person sees it on the page; time moves only through the page's own clock controls.
 */
const CHROMIUM = "/usr/bin/chromium";
const run = promisify(execFile);
const TOKEN = "console-test-token-5f2c9e";
/** The value of an environment variable of the account: the page lists the variable, never this. */
const ENV_VALUE = "hf-console-secret-81d3";
const PROJECT = "gpu-rental-e2e-console";
const LIFETIME = "10m";

const PROGRAM = `
const { Instance, GpuFleet } = require("gpu-rental/provider");
const light = { image: "ubuntu:22.04", runtype: "args", disk: 20 };
const trainer = new Instance("trainer", { image: "ubuntu:22.04", runtype: "ssh_direct", disk: 20, label: "trainer" });
const notebook = new Instance("notebook", { ...light, label: "notebook" });
const brief = new Instance("brief", { image: "ubuntu:22.04", runtype: "ssh_direct", disk: 20, label: "brief", maxLifetime: "${LIFETIME}" });
const workers = new GpuFleet("workers", { ...light, size: 2 });
exports.trainer = trainer.instanceId;
exports.brief = brief.instanceId;
exports.workers = workers.instanceIds;
`;

/**
 * Debian's chromium, installed when absent (the suite runs as root on its machines); never a browser download.
 * Before the emulator starts, and without blocking: the emulator answers from this process, and a deploy whose
 * calls went unanswered through a minutes-long install failed them while its first instance waited on the clock.
 */
async function ensureChromium(): Promise<void> {
  if (fs.existsSync(CHROMIUM)) return;
  await run("apt-get", ["update"]);
  await run("apt-get", ["install", "-y", "chromium"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

describe("the console in a browser", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let projectDir: string;
  let work: ReturnType<typeof scratch>;
  let browser: BrowserContext;
  let elsewhere: http.Server;
  let profile: string;

  beforeAll(async () => {
    await ensureChromium();
    work = scratch("console");
    emu = await emulator({
      clock: new Clock("frozen"),
      // Instances stay provisioning until the page moves the clock: the test sees them change there.
      lifecycle: { provisioningMs: 60_000, loadingMs: 0 },
      controlToken: TOKEN,
      ssh: { sandboxes: path.join(work.dir, "machines"), hostKeyFile: path.join(work.dir, "host", "key") },
    });
    const parent = path.join(REPO_ROOT, ".gpu-rental");
    fs.mkdirSync(parent, { recursive: true });
    projectDir = fs.mkdtempSync(path.join(parent, "e2e-console-"));
    fs.writeFileSync(path.join(projectDir, "Pulumi.yaml"), `name: ${PROJECT}\nruntime: nodejs\nmain: index.js\n`);
    fs.writeFileSync(path.join(projectDir, "index.js"), PROGRAM);
    stack = new TestStack(`console-${process.pid}`, {}, projectDir);
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
    // A page of another origin (another port of loopback), from which the test tries the control API.
    elsewhere = http.createServer((_request, response) => response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>elsewhere</title>"));
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  }, 600_000); // the install of chromium, once a machine, may take minutes

  afterAll(async () => {
    await browser?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    elsewhere?.close();
    await stack?.dispose();
    await emu?.close();
    if (projectDir) fs.rmSync(projectDir, { recursive: true, force: true });
    work?.remove();
  }, 120_000);

  const control = (method: string, route: string, body?: unknown) => call(emu.url, method, route, { body, headers: { "x-emulator-token": TOKEN } });
  const rows = (page: Page) =>
    page.$$eval("#instances tbody tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!.trim())));
  /** Until the emulator holds `count` instances, however slow the machine; a failed `up` fails it at once. */
  const instancesMade = async (count: number, deployed: Promise<unknown>) => {
    let failed: unknown;
    deployed.catch((error) => (failed = error ?? new Error("up failed")));
    for (const deadline = Date.now() + 300_000; emu.marketplace.instances.all().length < count; ) {
      if (failed) throw failed;
      if (Date.now() > deadline) throw new Error(`up made ${emu.marketplace.instances.all().length} of ${count} instances in 5 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  /** Waits, in the browser, until the page shows what `check` looks for (the page reads the emulator every second). */
  const until = <Arg extends string | number | undefined>(page: Page, check: (arg: Arg) => unknown, arg?: Arg) =>
    page.waitForFunction(check as (arg: unknown) => unknown, arg, { timeout: 60_000, polling: 200 });

  it("shows the deployment live, charts its spend as billed, moves the clock with the token only, refuses other origins", async () => {
    const clockBefore = emu.marketplace.clock.now();
    // The engine deploys while the browser starts: `up` waits for instances that boot only when the page moves the clock.
    const deployed = stack.ok("up", "--yes");
    // Awaited below; a failure meanwhile is reported there, not as an unhandled rejection.
    deployed.catch(() => undefined);
    // `gpu-rental emulator` prints the console's address, and serves the page there.
    const command = await emulatorProcess(["--no-ssh"]);
    try {
      const line = (await command.waitFor(/^Console: (\S+) \(open it in a browser[^\n]*--control-token\)$/m))[1];
      expect(line).toBe(`${command.url}/console`);
      profile = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-chromium-"));
      browser = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1360, height: 900 },
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      });
      // An emulator without a control token shows everything, its controls off.
      const tokenless = await browser.newPage();
      await tokenless.goto(line);
      await until(tokenless, () => document.querySelector("#controls")?.textContent?.includes("This emulator has no control token"));
      expect(await tokenless.$$eval("#controls fieldset", (sets) => sets.map((set) => (set as HTMLFieldSetElement).disabled))).toEqual([true, true, true]);
      expect(await tokenless.textContent("main section h2")).toMatch(/^Instances of /);
      await tokenless.close();
    } finally {
      await command.stop();
    }
    const page = browser.pages()[0] ?? (await browser.newPage());
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));

    // Without the token: nothing shown, and the controls are refused.
    await page.goto(`${emu.url}/console`);
    await until(page, () => document.querySelector("#refused")?.textContent?.includes("needs its control token"));
    await page.click("#advance-1m");
    await until(page, () => document.querySelector("#said")?.textContent?.startsWith("Refused (401 control_token_required)"));
    expect(emu.marketplace.clock.now()).toBe(clockBefore);

    // From another origin, even with the token: the browser's own request is refused and reads nothing.
    const other = await browser.newPage();
    await other.goto(`http://127.0.0.1:${(elsewhere.address() as { port: number }).port}/`);
    const fromElsewhere = await other.evaluate(
      async ({ url, token }) => {
        const tried = async (request: Promise<Response>) => request.then((r) => `${r.status} ${r.type}`, (e: Error) => `failed: ${e.name}`);
        return {
          // JSON with the token header: the browser asks first (CORS), and the emulator answers no preflight.
          json: await tried(fetch(`${url}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json", "x-emulator-token": token }, body: '{"ms":3600000}' })),
          // A form-like post, which browsers send without asking: the emulator refuses it (Origin), unseen by the page.
          plain: await tried(fetch(`${url}/_emulator/clock/advance`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: '{"ms":3600000}' })),
          read: await tried(fetch(`${url}/_emulator/console`)),
        };
      },
      { url: emu.url, token: TOKEN },
    );
    expect(fromElsewhere).toEqual({ json: "failed: TypeError", plain: "0 opaque", read: "failed: TypeError" });
    await other.close();
    expect(emu.marketplace.clock.now()).toBe(clockBefore);
    // What the emulator answers such a request, seen from outside a browser: refused by its Origin, token or not.
    const crossSite = await call(emu.url, "POST", "/_emulator/clock/advance", { body: { ms: 1 }, headers: { "x-emulator-token": TOKEN, origin: "http://127.0.0.1:1" } });
    expect([crossSite.status, crossSite.body.error]).toEqual([403, "forbidden_origin"]);

    // A variable of the account: its name listed, its value nowhere.
    await emu.client().envVars.create("HF_TOKEN", ENV_VALUE);
    // The engine has made the five (provisioning until the page moves the clock): on a loaded machine that alone
    // took over a minute, which the page's own wait below is not about.
    await instancesMade(5, deployed);
    // The token is typed in.
    await page.fill("#token", TOKEN);
    await until(page, () => document.querySelectorAll("#instances tbody tr").length === 5);
    // The field still holds what was typed, masked.
    expect(await page.$eval("#token", (input) => [(input as HTMLInputElement).type, (input as HTMLInputElement).value.length])).toEqual(["password", TOKEN.length]);
    await until(page, () => document.querySelector("#env-vars")?.textContent?.includes("HF_TOKEN"));
    const booting = await rows(page);
    expect(booting.map((row) => row[2])).toEqual(Array(5).fill("provisioning"));
    // The stack's name beside each of its instances, and the resource that rented it (a fleet's member by its index).
    expect(booting.map((row) => row[8])).toEqual(Array(5).fill(`${PROJECT}/${stack.name}`));
    expect(booting.map((row) => row[9]).sort()).toEqual(["brief", "notebook", "trainer", "workers (member 0)", "workers (member 1)"]);

    // The page's own control, with the token, moves the clock: the machines boot and every instance turns running.
    await page.click("#advance-1m");
    await until(page, () => [...document.querySelectorAll("#instances .status")].filter((s) => s.textContent === "running").length === 5);
    expect(emu.marketplace.clock.now()).toBe(clockBefore + 60_000);
    await deployed;
    const outputs = await stack.outputs();
    const running = await rows(page);
    expect(running.map((row) => row[1]).sort()).toEqual(["brief", "notebook", "trainer", "workers-0", "workers-1"]);
    const trainer = running.find((row) => row[0] === String(outputs.trainer))!;
    expect(trainer[10]).toMatch(/^ssh -p \d+ root@127\.0\.0\.1$/);
    expect(running.find((row) => row[0] === String(outputs.brief))![7]).toMatch(/^\d+m \d+s$/);

    // The maxLifetime instance: once its watchdog waits on the clock, the page moves it 5 minutes (5 left), then 10
    // more, past the lifetime: the instance ends itself and leaves the page.
    for (let tries = 0; ; tries++) {
      const machine = await control("GET", `/_emulator/instances/${outputs.brief}/machine`);
      if (machine.body.sleeping_until?.length) break;
      if (tries > 300) throw new Error(`the watchdog of ${outputs.brief} never waited on the clock: ${JSON.stringify(machine.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.fill("#advance-minutes", "5");
    await page.click("#advance");
    const briefRow = `#instances tr[data-instance="${outputs.brief}"] td:nth-child(8)`;
    await until(page, (selector) => document.querySelector(selector)?.textContent === "5m 0s", briefRow);
    expect(emu.marketplace.clock.now()).toBe(clockBefore + 6 * 60_000);

    // The screenshot of docs/emulator.md (written there with GPU_RENTAL_SCREENSHOTS=1; kept in .gpu-rental/ otherwise).
    const shot = process.env.GPU_RENTAL_SCREENSHOTS ? path.join(REPO_ROOT, "docs", "images", "console.png") : path.join(REPO_ROOT, ".gpu-rental", "console.png");
    fs.mkdirSync(path.dirname(shot), { recursive: true });
    await page.screenshot({ path: shot, fullPage: true });

    await page.click("#advance-10m");
    await until(page, (id) => !document.querySelector(`#instances tr[data-instance="${id}"]`) && document.querySelectorAll("#instances tbody tr").length === 4, outputs.brief);
    expect(emu.marketplace.instances.all().map((i) => i.id)).not.toContain(outputs.brief);

    // The spend chart: drawn, a line for each instance charged (the ended one too) and the total, which is what the
    // emulator bills (its charges view, at the same emulated time: the clock is frozen).
    const charges = (await call(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as { amount: number }[];
    const billed = charges.reduce((sum, c) => sum + c.amount, 0);
    expect(charges).toHaveLength(5);
    await until(page, (total) => Math.abs(Number(document.querySelector("#spend-chart")?.getAttribute("data-total")) - total) < 1e-5, billed);
    // ...which is what the instances' lines add up to (none ended before the page opened).
    expect(Math.abs(Number(await page.getAttribute("#spend-chart", "data-drawn")) - billed)).toBeLessThan(1e-5);
    const chart = await page.$eval("#spend-chart", (node) => {
      const canvas = node.querySelector("canvas")!;
      const pixels = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
      let drawn = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) drawn++;
      return { series: Number((node as HTMLElement).dataset.series), legend: [...node.querySelectorAll(".u-legend th")].map((th) => th.textContent!.trim()).filter(Boolean), drawn };
    });
    expect(chart.series).toBe(5);
    expect(chart.legend).toEqual(expect.arrayContaining([`${outputs.trainer} trainer`, `${outputs.brief} (ended)`, "Total"]));
    expect(chart.drawn).toBeGreaterThan(500);
    // The figure beside it, to its four decimals (the charges view rounds each row to six).
    expect(Math.abs(Number((await page.textContent("#spent"))!.slice(1)) - billed)).toBeLessThan(0.00006);

    // No key, token or secret in the page, the URLs it asked for, or the browser's storage.
    const html = await page.content();
    const storage = await page.evaluate(async () => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, databases: (await indexedDB.databases()).length }));
    expect(storage).toEqual({ local: 0, session: 0, cookie: "", databases: 0 });
    expect((await browser.cookies()).length).toBe(0);
    for (const secret of [TOKEN, emu.apiKey, ENV_VALUE]) {
      expect(html).not.toContain(secret);
      expect(urls.filter((url) => url.includes(secret))).toEqual([]);
    }
    expect(urls.every((url) => url.startsWith(`${emu.url}/`))).toBe(true);
  }, 400_000);
});
