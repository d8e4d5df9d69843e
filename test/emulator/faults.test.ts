import * as nodeHttp from "node:http";
import { GpuRentalClient, NetworkError } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * Faults as real servers have them. A request whose client gave up (its timeout, a reset) was still received:
 * the service carries it out, and with a latency fault it completes later, after the delay; the client never
 * hears of it. (A `drop` fault is the other case: the connection fails before the service has the request.)
 */
let emu: TestEmulator;
beforeEach(async () => {
  emu = await emulator();
});
afterEach(() => emu.close());

const instances = async () => (await http(emu.url, "GET", "/api/v1/instances/", { key: emu.apiKey })).body.instances as any[];
const cheapest = async () => (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { order: [["dph_total", "asc"]], limit: 1 } })).body.offers[0];

/** Polls until `check` holds (the emulator's work happens on its own time here: wall-clock latency). */
async function eventually(check: () => Promise<boolean>, withinMs = 5_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Sends a request and gives up (destroys the connection) after `ms`, as a client's timeout does. */
function giveUpAfter(ms: number, method: string, path: string, body: unknown): Promise<"gave up" | number> {
  return new Promise((resolve) => {
    const req = nodeHttp.request(`${emu.url}${path}`, { method, headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", () => resolve("gave up"));
    req.setTimeout(ms, () => req.destroy());
    req.end(JSON.stringify(body));
  });
}

it("a creation whose client timed out during a latency fault is carried out after the delay", async () => {
  const offer = await cheapest();
  emu.faults.add({ path: "/api/v0/asks/", kind: "latency", delayMs: 400 });
  expect(await giveUpAfter(50, "PUT", `/api/v0/asks/${offer.id}/`, { image: "late", label: "late" })).toBe("gave up");
  expect(await instances()).toEqual([]);
  await eventually(async () => (await instances()).length === 1);
  expect((await instances())[0]).toMatchObject({ label: "late", machine_id: offer.machine_id });
});

it("the SDK's creation times out (NetworkError); the instance appears later, once", async () => {
  const offer = await cheapest();
  emu.faults.add({ path: "/api/v0/asks/", kind: "latency", delayMs: 300 });
  const impatient = new GpuRentalClient({ apiUrl: emu.url, apiKey: emu.apiKey, timeoutMs: 50, retries: 0 });
  await expect(impatient.instances.create(offer.id, { image: "late" })).rejects.toBeInstanceOf(NetworkError);
  await eventually(async () => (await instances()).length === 1);
  // The offer is taken: the late creation holds it, as a creation that answered would.
  expect((await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { id: { eq: offer.id } } })).body.offers).toEqual([]);
});

it("a reset by the client after sending the request does not stop it", async () => {
  const offer = await cheapest();
  emu.faults.add({ path: "/api/v0/asks/", kind: "latency", delayMs: 200 });
  // What the service saw: for each PUT it received, whether its answer was written before the connection closed.
  const answeredBeforeClose: boolean[] = [];
  emu.server.server.on("request", (req: nodeHttp.IncomingMessage, res: nodeHttp.ServerResponse) => {
    if (req.method === "PUT") res.once("close", () => answeredBeforeClose.push(res.writableFinished));
  });
  const req = nodeHttp.request(`${emu.url}/api/v0/asks/${offer.id}/`, { method: "PUT", headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" } });
  let answered = false;
  req.on("response", () => (answered = true));
  const clientError = new Promise<string>((resolve) => req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message)));
  // A TCP reset (RST), not a polite close, 20 ms after the request was sent in full: well inside the latency.
  req.end(JSON.stringify({ image: "reset" }), () => setTimeout(() => req.socket!.resetAndDestroy(), 20));
  expect(await clientError).toMatch(/ECONNRESET|socket hang up/);
  await eventually(async () => (await instances()).length === 1);
  expect((await instances())[0]).toMatchObject({ image_uuid: "reset", machine_id: offer.machine_id });
  // The reset happened: the service had the request, and its connection closed before any answer was written.
  expect(answered).toBe(false);
  expect(answeredBeforeClose).toEqual([false]);
});

it("a drop fault fails the connection before the service has the request: nothing is done", async () => {
  const offer = await cheapest();
  emu.faults.add({ path: "/api/v0/asks/", kind: "drop" });
  expect(await giveUpAfter(1_000, "PUT", `/api/v0/asks/${offer.id}/`, { image: "dropped" })).toBe("gave up");
  expect(emu.faults.injected).toBe(1);
  expect(await instances()).toEqual([]);
});
