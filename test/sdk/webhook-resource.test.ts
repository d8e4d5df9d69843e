import { direct, WEBHOOK } from "../../provider/lifecycle";
import { emulator, TestEmulator } from "../helpers/emulator";

const Webhook = direct(WEBHOOK);

describe("Webhook", () => {
  it("refuses at preview a URL that is not one and an event type that is not one, naming the input", () => {
    const reasons = (news: Record<string, unknown>) => Webhook.check(news).failures.map((f) => f.property);
    expect(reasons({ url: "https://hooks.example.com/gpu", eventTypes: ["client:outbid"] })).toEqual([]);
    expect(reasons({ url: "hooks.example.com", eventTypes: ["client:outbid"] })).toEqual(["url"]);
    expect(reasons({ url: "https://hooks.example.com/gpu", eventTypes: ["client:nothing"] })).toEqual(["eventTypes"]);
    expect(reasons({ url: "https://hooks.example.com/gpu", eventTypes: [] })).toEqual(["eventTypes"]);
  });

  describe("over HTTP", () => {
    let emu: TestEmulator;
    beforeAll(async () => {
      emu = await emulator();
    });
    afterAll(() => emu.close());
    const options = () => ({ client: emu.client() });
    const held = () => emu.marketplace.seededUser.webhooks ?? [];

    it("creates with its secret as an output, changes in place, rotates on a new secretVersion, imports without a secret, deletes", async () => {
      const spec = { url: "https://hooks.example.com/a", eventTypes: ["client:outbid"], name: "ops" };
      const { id, outs } = await Webhook.create(spec, options());
      expect(outs).toEqual({ ...spec, webhookId: Number(id), secret: held()[0].secret });
      expect(Webhook.diff(outs, { ...spec, url: "https://hooks.example.com/b" })).toEqual({ changes: true, replaces: [], updates: ["url"], deleteBeforeReplace: false });
      const moved = await Webhook.update(id, outs, { ...spec, url: "https://hooks.example.com/b" }, options());
      expect(moved).toMatchObject({ url: "https://hooks.example.com/b", secret: outs.secret });
      const rotated = await Webhook.update(id, moved, { ...spec, url: "https://hooks.example.com/b", secretVersion: 2 }, options());
      expect(rotated.secret).toBe(held()[0].secret);
      expect(rotated.secret).not.toBe(outs.secret);
      expect(await Webhook.read(id, rotated, options())).toMatchObject({ url: "https://hooks.example.com/b", secret: rotated.secret });
      expect(await Webhook.import(id, options())).toEqual({
        inputs: { url: "https://hooks.example.com/b", eventTypes: ["client:outbid"], name: "ops" },
        outs: { url: "https://hooks.example.com/b", eventTypes: ["client:outbid"], name: "ops", webhookId: Number(id), secret: null },
      });
      await Webhook.delete(id, options());
      expect(held()).toEqual([]);
      expect(await Webhook.read(id, rotated, options())).toBeNull();
    });
  });
});
