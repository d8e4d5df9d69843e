import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import { GpuRentalClient, verifyWebhookDelivery } from "../../sdk";
import type { DocMachine } from "./doc-program";

/**
 * The account as code (issue 35's acceptance), the same checks for every language: a program of the language's own
 * (a team with a role and an invitation, a subaccount, two env vars, a webhook to a receiver of the test's, a local
 * volume, and an interruptible worker on the volume's machine that mounts it) deployed by the real engine on a docs
 * page's machine, under an account of its own (a team account refuses SSH-key calls, which the page's program makes).
 */
export interface AccountProgram {
  /** The folder's files: Pulumi.yaml, and the program's source where it is not in it. */
  files: Record<string, string>;
  /** The program's config keys and outputs, as the language spells them. */
  names: { receiverUrl: string; hfToken: string; childPassword: string; bid: string; workerId: string; webhookSecret: string };
  /** Puts the code `pulumi import --out imported.<ext>` wrote into the program. */
  spliceImported: string;
  importedFile: string;
  /** Checks of the language's own after the first up: its outputs (by name, as `pulumi stack output --json` prints them). */
  afterUp?: (output: (name: string) => Promise<unknown>, api: GpuRentalClient) => Promise<void>;
}

/** What the program declares, as the checks expect it (the languages' programs declare the same). */
export const DECLARED = {
  team: "research",
  invitee: (language: string) => `${language}-bot@gpu-rental.test`,
  project: "research",
  ciPermissions: { api: { misc: {}, instance_read: {}, instance_write: {} } },
};

export async function checkAccountAsCode(machine: DocMachine, url: string, language: string, program: AccountProgram): Promise<void> {
  const control = async (route: string, body: unknown) =>
    (await fetch(`${url}${route}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } })).json();
  const owner = (await control("/_emulator/users", { email: `${language}-account@gpu-rental.test` })).api_key as string;
  await control("/_emulator/users", { email: DECLARED.invitee(language) });
  const api = new GpuRentalClient({ apiUrl: url, apiKey: owner, minRetryDelayMs: 5 });
  const receiver = await webhookReceiver();
  const secrets = { hfToken: `hf_${language}_do_not_store`, password: `child-password-${language}-do-not-store` };
  const folder = `${language}-account`;
  const { names } = program;
  try {
    fs.mkdirSync(path.join(machine.home, folder));
    for (const [file, text] of Object.entries(program.files)) fs.writeFileSync(path.join(machine.home, folder, file), text);
    await machine.ok(
      `pulumi stack init dev && pulumi config set-all --plaintext gpu-rental:apiUrl=${url} --secret gpu-rental:apiKey=${owner} ` +
        `--plaintext ${names.receiverUrl}=${receiver.url} --secret ${names.hfToken}=${secrets.hfToken} --secret ${names.childPassword}=${secrets.password} --plaintext ${names.bid}=9.5`,
      folder,
    );
    const up = await machine.ok("pulumi up --yes", folder);
    expect(up).toMatch(/\+ 10 created/);
    // Said when the subaccount is made: destroy leaves it on the service.
    expect(up).toMatch(/Subaccount child .*destroy leaves it on the service/);
    const workerId = Number((await machine.ok(`pulumi stack output ${names.workerId}`, folder)).trim());
    await program.afterUp?.(async (name) => JSON.parse(await machine.ok(`pulumi stack output ${name} --json`, folder)), api);
    // The machine's /data, the volume, as this computer reaches it while the machine runs (its home is /root).
    const seen = async () => {
      const home = (await (await fetch(`${url}/_emulator/instances/${workerId}/machine`)).json()).sandbox as string;
      return fs.readFileSync(path.join(home, "..", "data", "seen"), "utf8");
    };
    expect(await seen()).toBe(`${DECLARED.project} ${secrets.hfToken}\n`);

    // The team, its role, and the invitation accepted (the service mails the invitee): a member with the role.
    expect((await api.teamRoles.list()).find((role) => role.name === "ci")?.permissions).toEqual(DECLARED.ciPermissions);
    await control("/_emulator/team-invitations/accept", { team: DECLARED.team, email: DECLARED.invitee(language) });
    expect((await api.teamMembers.list()).find((m) => m.email === DECLARED.invitee(language))).toMatchObject({ roles: ["ci"] });

    // Outbid by another client: the receiver gets the event, signed with the webhook's secret.
    await control(`/_emulator/instances/${workerId}/outbid`, {});
    const webhookSecret = await machine.secretOutput(names.webhookSecret, folder);
    const delivery = await receiver.next((event) => event.type === "outbid");
    expect(verifyWebhookDelivery({ secret: webhookSecret, body: delivery.body, headers: delivery.headers })).toMatchObject({ notif_type: "outbid" });
    expect((await api.instances.get(workerId))?.actual_status).not.toBe("running");
    // A bid under the offer's minimum is refused at preview, naming the input; a higher one brings the worker back in place.
    const low = await machine.run(`pulumi config set ${names.bid} 0.0001 && pulumi preview`, folder);
    expect(low).toMatchObject({ code: 1, output: expect.stringMatching(/price.*below the minimum bid of its offer/s) });
    const raised = await machine.ok(`pulumi config set ${names.bid} 10 && pulumi up --yes`, folder);
    expect(raised).toMatch(/~ 1 updated/);
    expect(raised).not.toMatch(/replaced/);
    expect((await api.instances.get(workerId))?.actual_status).toBe("running");
    // The volume kept what the first boot wrote; onstart ran again on the new boot.
    expect(await seen()).toBe(`${DECLARED.project} ${secrets.hfToken}\n`.repeat(2));

    // Made by hand, then imported: a local volume, a role, a webhook and an env var; then an up changes nothing.
    const [offer] = await api.volumes.searchLocalOffers({ limit: 1 });
    const volume = await api.volumes.createLocal({ offerId: offer.ask_contract_id, size: 2, name: "by_hand" });
    await api.teamRoles.create("auditor", { api: { billing: {} } });
    const role = (await api.teamRoles.list()).find((r) => r.name === "auditor")!;
    const hook = await api.webhooks.create({ webhook_url: "https://hooks.example.com/by-hand", event_types: ["client:low_credit"], name: "by-hand" });
    await api.envVars.create("BY_HAND", "set-by-hand");
    const imports = {
      resources: [
        { type: "gpu-rental:index:LocalVolume", name: "byHand", id: String(volume.id) },
        { type: "gpu-rental:index:TeamRole", name: "auditor", id: String(role.id) },
        { type: "gpu-rental:index:Webhook", name: "byHandHook", id: String(hook.id) },
        // Declared with the value the service shows (masked): the printed code says to put the real one in its place.
        { type: "gpu-rental:index:EnvVar", name: "byHandVar", id: "BY_HAND" },
      ],
    };
    fs.writeFileSync(path.join(machine.home, folder, "imports.json"), JSON.stringify(imports));
    const imported = await machine.ok(`pulumi import -f imports.json --yes --protect=false --out ${program.importedFile} && ${program.spliceImported}`, folder);
    expect(imported).toMatch(/= 4 imported/);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", folder)).toMatch(/14 unchanged/);

    // No secret in plaintext: not in state, not in anything the commands printed.
    const state = await machine.ok("pulumi stack export", folder);
    for (const secret of [secrets.hfToken, secrets.password, owner, webhookSecret]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }

    expect(await machine.ok("pulumi destroy --yes", folder)).toMatch(/- 14 deleted/);
    expect(await api.instances.list()).toEqual([]);
    expect(await api.volumes.list()).toEqual([]);
    expect(await api.envVars.list()).toEqual({});
    expect(await api.webhooks.list()).toEqual([]);
    // What the service keeps: the subaccount (an account cannot be deleted).
    expect(await api.subaccounts.list()).toHaveLength(1);
  } finally {
    await receiver.close();
  }
}

/** A notification receiver on loopback (the docs pages' emulators run for local use, so they deliver there): every delivery, raw. */
async function webhookReceiver() {
  const deliveries: { body: string; headers: http.IncomingHttpHeaders; type: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      deliveries.push({ body, headers: req.headers, type: String(JSON.parse(body || "{}").notif_type ?? "") });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks/gpu-rental`,
    /** The first delivery matching `wanted`, waited for (the emulator delivers at once, then retries). */
    async next(wanted: (d: { type: string }) => boolean, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = deliveries.find(wanted);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no such delivery in ${timeoutMs} ms; got ${deliveries.map((d) => d.type).join(", ") || "none"}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
