import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhookDelivery, WebhookSignatureError } from "../../sdk";
import { emulator, http as call, TestEmulator } from "../helpers/emulator";

/** A receiver on loopback: what it was sent, and the statuses it answers with (then 200). */
async function receiver() {
  const got: { body: string; headers: http.IncomingHttpHeaders }[] = [];
  const statuses: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString(), headers: req.headers });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, statuses, close: () => new Promise((r) => server.close(r)) };
}

describe("notification webhooks (emulator/WEBHOOKS.md)", () => {
  let emu: TestEmulator;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const api = (method: string, path: string, body?: unknown, key = emu.apiKey) => call(emu.url, method, path, { key, body });
  beforeEach(async () => {
    emu = await emulator();
    hooks = await receiver();
  });
  afterEach(async () => {
    await emu.close();
    await hooks.close();
  });
  const create = async (eventTypes: string[], url = hooks.url) => {
    const res = await api("POST", "/api/v0/webhooks", { name: "ops", webhook_url: url, event_types: eventTypes });
    expect(res.status).toBe(200);
    return res.body.webhook as { id: number; webhook_secret: string };
  };
  const outbidInstance = async () => {
    const [offer] = (await api("POST", "/api/v0/bundles/", { type: "bid", limit: 1 })).body.offers;
    const id = (await api("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", price: offer.min_bid })).body.new_contract;
    await call(emu.url, "POST", `/_emulator/instances/${id}/outbid`, {});
    await emu.webhooks.settled();
    return id;
  };

  it("shows the secret at creation and rotation only; lists, changes, deletes; at most 4; refuses an event type that is not one", async () => {
    const made = await create(["client:outbid"]);
    expect(made.webhook_secret).toMatch(/^whsec_/);
    const listed = (await api("GET", "/api/v0/webhooks")).body.webhooks;
    expect(listed).toEqual([expect.objectContaining({ id: made.id, name: "ops", webhook_url: hooks.url, event_types: ["client:outbid"] })]);
    expect(JSON.stringify(listed)).not.toContain(made.webhook_secret);
    const changed = await api("PUT", `/api/v0/webhooks/${made.id}`, { event_types: ["client:outbid", "client:low_credit"] });
    expect(changed.body.webhook).toMatchObject({ event_types: ["client:outbid", "client:low_credit"] });
    expect(changed.body.webhook.webhook_secret).toBeUndefined();
    const rotated = (await api("POST", `/api/v0/webhooks/${made.id}/rotate-secret`)).body.webhook;
    expect(rotated.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.webhook_secret).not.toBe(made.webhook_secret);
    expect((await api("POST", "/api/v0/webhooks", { webhook_url: hooks.url, event_types: ["client:nothing"] })).status).toBe(400);
    expect((await api("POST", "/api/v0/webhooks", { webhook_url: "not a url", event_types: ["client:outbid"] })).status).toBe(400);
    for (let i = 0; i < 3; i++) await create(["client:outbid"]);
    expect(await api("POST", "/api/v0/webhooks", { webhook_url: hooks.url, event_types: ["client:outbid"] })).toMatchObject({ status: 400, body: { error: "webhook_limit" } });
    expect(await api("DELETE", `/api/v0/webhooks/${made.id}`)).toMatchObject({ status: 200, body: { success: true } });
    expect(await api("DELETE", `/api/v0/webhooks/${made.id}`)).toMatchObject({ status: 404 });
  });

  it("delivers a signed client:outbid that the SDK's check accepts, and refuses a tampered or replayed one", async () => {
    const hook = await create(["client:outbid"]);
    const id = await outbidInstance();
    expect(hooks.got).toHaveLength(1);
    const [{ body, headers }] = hooks.got;
    expect(headers).toMatchObject({ "x-vast-delivery-attempt": "1", "x-vast-event-id": expect.any(String), "content-type": "application/json" });
    const now = emu.marketplace.clock.now();
    const event = verifyWebhookDelivery({ secret: hook.webhook_secret, body, headers, now });
    expect(event).toMatchObject({ notif_type: "outbid", user_id: emu.marketplace.seededUser.id, message: expect.stringContaining(String(id)) });
    expect(event.event_id).toBe(headers["x-vast-event-id"]);
    expect(() => verifyWebhookDelivery({ secret: hook.webhook_secret, body: body.replace("outbid", "outbidX"), headers, now })).toThrow(WebhookSignatureError);
    expect(() => verifyWebhookDelivery({ secret: "whsec_other", body, headers, now })).toThrow(/does not match/);
    expect(() => verifyWebhookDelivery({ secret: hook.webhook_secret, body, headers, now: now + 3_600_000 })).toThrow(/old/);
  });

  it("tries again on 5xx and 429 on the emulator's clock, the same event each time; gives up at once on a 4xx", async () => {
    await create(["client:outbid", "client:instance_deleted"]);
    hooks.statuses.push(503, 429);
    const id = await outbidInstance();
    expect(hooks.got.map((g) => g.headers["x-vast-delivery-attempt"])).toEqual(["1"]);
    emu.marketplace.clock.advance(1_000);
    await emu.webhooks.settled();
    emu.marketplace.clock.advance(5_000);
    await emu.webhooks.settled();
    expect(hooks.got.map((g) => g.headers["x-vast-delivery-attempt"])).toEqual(["1", "2", "3"]);
    expect(new Set(hooks.got.map((g) => g.headers["x-vast-event-id"])).size).toBe(1);
    hooks.statuses.push(404);
    await api("DELETE", `/api/v0/instances/${id}/`, {});
    await emu.webhooks.settled();
    emu.marketplace.clock.advance(3_600_000);
    await emu.webhooks.settled();
    expect(hooks.got.map((g) => JSON.parse(g.body).notif_type)).toEqual(["outbid", "outbid", "outbid", "instance_deleted"]);
  });

  it("sends the test event once, and client:low_credit when the credit goes under $5", async () => {
    const hook = await create(["client:low_credit"]);
    expect(await api("POST", `/api/v0/webhooks/${hook.id}/test`)).toMatchObject({ status: 200, body: { msg: "Test webhook delivered" } });
    await emu.webhooks.settled();
    expect(JSON.parse(hooks.got[0].body)).toMatchObject({ notif_type: "webhook_test" });
    emu.marketplace.seededUser.credit = 5.01;
    const [offer] = (await api("POST", "/api/v0/bundles/", { limit: 1 })).body.offers;
    await api("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu" });
    emu.marketplace.clock.advance(3_600_000);
    await api("GET", "/api/v1/instances/");
    await emu.webhooks.settled();
    expect(hooks.got.map((g) => JSON.parse(g.body).notif_type)).toEqual(["webhook_test", "low_credit"]);
  });

  it("started for other than local use, takes only https:// URLs, as the live service", async () => {
    const remote = await emulator({ localWebhooks: false });
    try {
      expect(await call(remote.url, "POST", "/api/v0/webhooks", { key: remote.apiKey, body: { webhook_url: hooks.url, event_types: ["client:outbid"] } })).toMatchObject({
        status: 400, body: { error: "invalid_url" },
      });
    } finally {
      await remote.close();
    }
  });
});
