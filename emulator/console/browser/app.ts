/// <reference lib="dom" />
/**
 * The console page's script (a browser script, not a module: built with the package, served as
 * /console/assets/console.js). It reads `GET /_emulator/console` every second while the page is shown, draws it with
 * Preact (through htm, no build step) and the spend chart with uPlot, both loaded before it as globals.
 *
 * The control token is typed by the user and kept in this script's memory only: sent in `X-Emulator-Token`, never
 * put in a URL, the page or the browser's storage, and gone when the page is closed.
 */

/** The globals of the libraries' prebuilt files (htm/preact/standalone.umd.js, uPlot.iife.min.js). */
declare const htmPreact: { html: (strings: TemplateStringsArray, ...values: unknown[]) => unknown; render: (vnode: unknown, parent: Element) => void; Component: new () => object };
declare const uPlot: new (options: object, data: (number | null)[][], target: HTMLElement) => { setData(data: (number | null)[][]): void; setSize(size: { width: number; height: number }): void; destroy(): void };

(() => {
  const { html, render } = htmPreact;
  const POLL_MS = 1000;

  interface InstanceRow { id: number; label: string; status: string; gpu: string; pricePerHour: number; billingNow: number; ageSeconds: number; lifetimeLeft: number | null; token: string | null; stack: string | null; resource: string | null; ssh: string | null }
  interface Account {
    id: number; email: string; credit: number; spent: number; billingNow: number; instances: InstanceRow[]; earlier: number;
    charges: { instance: number; from: number; to: number; amount: number }[];
    templates: { id: number; name: string; image: string; hash: string }[];
    volumes: { id: number; name: string; type: string; size: number; instances: number[] }[];
    sshKeys: { id: number; type: string; fingerprint: string; comment: string }[];
    apiKeys: { id: number; name: string; scoped: boolean; created: number }[];
    envVars: string[];
  }
  interface View {
    now: number; clock: string; tokenRequired: boolean; contention: number; faults: number;
    stats: { offersAccepted: number; offersLostToContention: number; offersUnavailable: number; faultsInjected: number };
    market: { gpu: string; offers: number; onMarket: number; rented: number; otherTenants: number; cheapest: number | null; dearest: number | null }[];
    accounts: Account[];
  }
  interface Refusal { status: number; error: string; msg: string }

  /** Everything the page knows; drawn again whole at each change (Preact changes only what differs). */
  const state: { view?: View; refused?: Refusal; account?: number; said?: { text: string; refused: boolean } } = {};
  let token = "";
  /** Each account's spend as the page saw it: per instance, [emulator seconds, $ so far] points. */
  const history = new Map<number, Map<number, [number, number][]>>();

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token) headers["X-Emulator-Token"] = token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store", credentials: "omit" });
    return { status: res.status, body: await res.json().catch(() => ({})) };
  }

  async function poll(): Promise<void> {
    try {
      // Only the charges made since the last reading: the others are in the history already.
      const since = state.view ? `?since=${state.view.now / 1000}` : "";
      const { status, body } = await call("GET", `/_emulator/console${since}`);
      if (status === 200) {
        state.view = body as View;
        state.refused = undefined;
        remember(state.view);
      } else {
        state.refused = { status, error: body.error ?? "", msg: body.msg ?? "" };
      }
    } catch (error) {
      state.refused = { status: 0, error: "unreachable", msg: `The emulator does not answer (${(error as Error).message}): is it still running?` };
    }
    draw();
  }

  function loop(): void {
    const next = () => setTimeout(loop, POLL_MS);
    if (document.hidden) next();
    else void poll().finally(next);
  }

  /** Adds this reading of every account's charges to its history (a point only where the amount moved). */
  function remember(view: View): void {
    for (const account of view.accounts) {
      const lines = history.get(account.id) ?? new Map<number, [number, number][]>();
      history.set(account.id, lines);
      for (const charge of account.charges) {
        const points = lines.get(charge.instance) ?? [[charge.from, 0]];
        lines.set(charge.instance, points);
        const last = points[points.length - 1];
        if (charge.to > last[0]) {
          // A flat stretch keeps two points, its start and its end, however often it is read.
          const before = points[points.length - 2];
          if (before && last[1] === charge.amount && before[1] === charge.amount) last[0] = charge.to;
          else points.push([charge.to, charge.amount]);
        }
      }
    }
  }

  /**
   * The chart's columns: the times, each instance's spend so far, and the total. What no line shows (instances
   * that ended before the page opened and that the ledger has summed since: `earlier`) is added to the total as a
   * constant, so it ends at the account's spend. `drawn`: what the lines add up to at the end.
   */
  function chartData(account: Account): { labels: string[]; data: (number | null)[][]; total: number; drawn: number } {
    const lines = [...(history.get(account.id) ?? new Map<number, [number, number][]>())];
    const times = [...new Set(lines.flatMap(([, points]) => points.map(([t]) => t)))].sort((a, b) => a - b).slice(-500);
    const labelOf = (id: number) => {
      const live = account.instances.find((i) => i.id === id);
      return live ? `${id} ${live.label}` : `${id} (ended)`;
    };
    const columns = lines.map(([, points]) => times.map((t) => valueAt(points, t)));
    const drawn = lines.reduce((sum, [, points]) => sum + points[points.length - 1][1], 0);
    const undrawn = Math.max(0, account.spent - drawn);
    const total = times.map((_, i) => columns.reduce((sum, column) => sum + (column[i] ?? 0), undrawn));
    return { labels: lines.map(([id]) => labelOf(id)), data: [times, ...columns, total], total: total[total.length - 1] ?? account.spent, drawn };
  }

  /** Spend at `t`: nothing before the first charge, the amounts read joined by straight lines, the last one after. */
  function valueAt(points: [number, number][], t: number): number | null {
    if (t < points[0][0]) return null;
    for (let i = 1; i < points.length; i++) {
      const [t1, v1] = points[i];
      if (t <= t1) {
        const [t0, v0] = points[i - 1];
        return t1 === t0 ? v1 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
      }
    }
    return points[points.length - 1][1];
  }

  /** The spend chart: uPlot draws into a node of its own, which Preact leaves alone (shouldComponentUpdate). */
  class SpendChart extends (htmPreact.Component as new () => { props: { account: Account } }) {
    private plot?: InstanceType<typeof uPlot>;
    private key = "";
    private node?: HTMLElement;
    shouldComponentUpdate(next: { account: Account }): boolean {
      this.update(next.account);
      return false;
    }
    componentDidMount(): void {
      this.update(this.props.account);
    }
    componentWillUnmount(): void {
      this.plot?.destroy();
    }
    update(account: Account): void {
      if (!this.node) return;
      const { labels, data, total, drawn } = chartData(account);
      this.node.dataset.total = total.toFixed(6);
      this.node.dataset.drawn = drawn.toFixed(6);
      this.node.dataset.series = String(labels.length);
      const key = `${account.id}|${labels.join("|")}`;
      if (key !== this.key || !this.plot) {
        this.plot?.destroy();
        this.key = key;
        const colors = ["#3b6fd8", "#d8793b", "#2e9e5b", "#a43bd8", "#d83b6f", "#7a8a1f", "#1f8a8a", "#8a5a1f"];
        const series = [{}, ...labels.map((label, i) => ({ label, stroke: colors[i % colors.length], width: 1.5 })), { label: "Total", stroke: "#1d2330", width: 3 }];
        const width = Math.max(300, this.node.clientWidth || 600);
        this.plot = new uPlot({ width, height: 220, series, scales: { x: { time: true } }, axes: [{}, { values: (_: unknown, ticks: number[]) => ticks.map((v) => `$${v.toFixed(3)}`), size: 70 }] }, data, this.node);
      } else {
        this.plot.setData(data);
      }
    }
    render() {
      return html`<div class="chart" id="spend-chart" ref=${(node: HTMLElement | null) => (this.node = node ?? undefined)}></div>`;
    }
  }

  /** A control call from the page: with the token when one was typed; what the emulator answered is said. */
  async function control(method: string, path: string, body: unknown, done: (answer: any) => string): Promise<void> {
    try {
      const { status, body: answer } = await call(method, path, body);
      state.said = status === 200 ? { text: done(answer), refused: false } : { text: `Refused (${status} ${answer.error}): ${answer.msg}`, refused: true };
    } catch (error) {
      state.said = { text: `Not sent: ${(error as Error).message}`, refused: true };
    }
    await poll();
  }

  const money = (n: number) => `$${n.toFixed(4)}`;
  const duration = (seconds: number) => {
    const s = Math.floor(seconds);
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
    if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
    return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  };
  const when = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  const field = (id: string) => (document.getElementById(id) as HTMLInputElement).value;

  function instancesTable(account: Account) {
    if (!account.instances.length) return html`<p class="note">No instances.</p>`;
    return html`<table id="instances"><thead><tr><th>ID</th><th>Label</th><th>Status</th><th>GPU</th><th class="num">$/hour</th><th class="num">billing now</th><th>Age</th><th>Lifetime left</th><th>Stack</th><th>Resource</th><th>SSH</th></tr></thead><tbody>
      ${account.instances.map((i) => html`<tr data-instance=${i.id}>
        <td>${i.id}</td><td class="label">${i.label}</td><td><span class=${`status status-${i.status}`}>${i.status}</span></td><td>${i.gpu}</td>
        <td class="num">${money(i.pricePerHour)}</td><td class="num">${money(i.billingNow)}</td><td>${duration(i.ageSeconds)}</td>
        <td>${i.lifetimeLeft === null ? "" : duration(i.lifetimeLeft)}</td>
        <td class="stack" title=${i.token ?? "no creation token: not made by gpu-rental"}>${i.stack ?? (i.token ? i.token.slice(0, i.token.lastIndexOf("-")) : "")}</td>
        <td class="resource">${i.resource ?? ""}</td>
        <td><code>${i.ssh ?? ""}</code></td></tr>`)}
    </tbody></table>`;
  }

  function marketTable(view: View) {
    return html`<table id="market"><thead><tr><th>GPU</th><th class="num">offers</th><th class="num">on market</th><th class="num">rented here</th><th class="num">taken by others</th><th class="num">free, $/hour</th></tr></thead><tbody>
      ${view.market.map((m) => html`<tr><td>${m.gpu}</td><td class="num">${m.offers}</td><td class="num">${m.onMarket}</td><td class="num">${m.rented}</td><td class="num">${m.otherTenants}</td>
        <td class="num">${m.cheapest === null ? "none left" : `${m.cheapest.toFixed(2)}–${m.dearest!.toFixed(2)}`}</td></tr>`)}
    </tbody></table>`;
  }

  function smallTable(id: string, heads: string[], rows: unknown[][], empty: string) {
    if (!rows.length) return html`<p class="note" id=${id}>${empty}</p>`;
    return html`<table id=${id}><thead><tr>${heads.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table>`;
  }

  function controls(view: View | undefined) {
    // The controls work with the control token only: an emulator without one keeps its control API to local tools.
    const usable = !view || view.tokenRequired;
    const advance = (minutes: number) =>
      control("POST", "/_emulator/clock/advance", { ms: Math.round(minutes * 60_000) }, (a) => `The clock moved ${duration(minutes * 60)} forward, to ${when(a.now)}.`);
    return html`<div class="controls" id="controls">
      ${usable ? "" : html`<p class="note">This emulator has no control token, so the console's controls are off: start it with --control-token (or GPU_RENTAL_CONTROL_TOKEN) to use them here.</p>`}
      <fieldset disabled=${!usable}><legend>Clock</legend>
        <button id="advance-1m" onClick=${() => advance(1)}>+1 min</button><button id="advance-10m" onClick=${() => advance(10)}>+10 min</button><button id="advance-1h" onClick=${() => advance(60)}>+1 hour</button>
        <input id="advance-minutes" type="number" min="0" step="1" value="30" size="4" /> min <button id="advance" onClick=${() => advance(Number(field("advance-minutes")))}>Advance</button></fieldset>
      <fieldset disabled=${!usable}><legend>Contention</legend>
        <input id="contention" type="number" min="0" max="1" step="0.1" value=${view?.contention ?? 0} size="4" />
        <button id="set-contention" onClick=${() => control("PUT", "/_emulator/settings", { contention: Number(field("contention")) }, (a) => `Contention is ${a.contention}.`)}>Set</button></fieldset>
      <fieldset disabled=${!usable}><legend>Faults</legend>
        <input id="fault-path" value="/api/v0/asks/" size="16" /> status <input id="fault-status" type="number" value="503" size="4" /> times <input id="fault-times" type="number" value="1" size="3" />
        <button id="add-fault" onClick=${() => control("POST", "/_emulator/faults", { path: field("fault-path"), kind: "status", status: Number(field("fault-status")), times: Number(field("fault-times")) }, (a) => `${a.faults.length} fault(s) pending.`)}>Inject</button>
        <button id="clear-faults" onClick=${() => control("DELETE", "/_emulator/faults", undefined, () => "Faults cleared.")}>Clear</button></fieldset>
      ${state.said ? html`<span id="said" class=${state.said.refused ? "refused" : "note"}>${state.said.text}</span>` : ""}
    </div>`;
  }

  function page() {
    const { view, refused } = state;
    const account = view?.accounts.find((a) => a.id === state.account) ?? view?.accounts.find((a) => a.instances.length) ?? view?.accounts[0];
    // Keyed: the token's field is the same element before and after the account list appears (it keeps what was typed).
    return html`<header>
        <h1>gpu-rental emulator</h1>
        <span class="clock" id="clock">${view ? `${when(view.now)} (clock ${view.clock})` : ""}</span>
        ${view ? html`<label key="account">Account <select id="account" onChange=${(e: Event) => ((state.account = Number((e.target as HTMLSelectElement).value)), draw())}>
          ${view.accounts.map((a) => html`<option value=${a.id} selected=${a.id === account?.id}>${a.id} ${a.email}</option>`)}</select></label>` : ""}
        <label key="token">Control token <input id="token" type="password" autocomplete="off" spellcheck="false" onInput=${(e: Event) => ((token = (e.target as HTMLInputElement).value), void poll())} /></label>
      </header>
      ${refused ? html`<p class="refused" id="refused">${refused.status === 401 ? "This emulator's console needs its control token: type it above." : `Refused (${refused.status} ${refused.error}): ${refused.msg}`}</p>` : ""}
      <main>
        ${account ? html`<section class="wide"><h2>Instances of ${account.email}</h2>${instancesTable(account)}</section>
        <section><h2>Spend</h2>
          <div class="figures"><span>Balance<b id="balance">${money(account.credit)}</b></span><span>Spent<b id="spent">${money(account.spent)}</b></span><span>Billing now<b id="billing-now">${money(account.billingNow)}/h</b></span></div>
          <${SpendChart} account=${account} /></section>` : ""}
        ${view ? html`<section><h2>Market</h2><p class="note">${view.stats.offersAccepted} offers accepted, ${view.stats.offersLostToContention} taken by other tenants first (contention ${view.contention}); ${view.faults} fault(s) pending, ${view.stats.faultsInjected} injected</p>${marketTable(view)}</section>` : ""}
        ${account ? html`<section><h2>Templates</h2>${smallTable("templates", ["ID", "Name", "Image", "Hash"], account.templates.map((t) => [t.id, t.name, t.image, t.hash]), "No templates.")}
          <h2>Volumes</h2>${smallTable("volumes", ["ID", "Name", "Type", "GB", "Instances"], account.volumes.map((v) => [v.id, v.name, v.type, v.size, v.instances.join(", ")]), "No volumes.")}</section>
        <section><h2>Keys</h2>${smallTable("api-keys", ["API key", "Name", "Access", "Created"], account.apiKeys.map((k) => [k.id, k.name, k.scoped ? "scoped" : "full", when(k.created * 1000)]), "No API keys.")}
          ${smallTable("ssh-keys", ["SSH key", "Type", "Fingerprint", "Comment"], account.sshKeys.map((k) => [k.id, k.type, k.fingerprint, k.comment]), "No SSH keys.")}
          ${smallTable("env-vars", ["Environment variable (values never shown)"], account.envVars.map((name) => [name]), "No environment variables.")}</section>` : ""}
        <section class="wide"><h2>Controls</h2>${controls(view)}</section>
      </main>`;
  }

  function draw(): void {
    render(page(), document.getElementById("app")!);
  }

  // What the page showed before its script ran ("Loading...") is not Preact's to keep.
  document.getElementById("app")!.replaceChildren();
  draw();
  loop();
})();
