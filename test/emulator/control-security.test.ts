import * as net from "node:net";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { emulatorProcess, killHard } from "../helpers/emulator-process";

/**
 * The control API answers local tools only (docs/control-api.md, "The control API's threat model"), and every edge of the
 * server, the framework's own refusals included, answers with the service's error body. Raw HTTP here: a
 * browser page, a rebinding name and a broken client send what fetch() would not.
 */
let emu: TestEmulator;
let port: number;
beforeAll(async () => {
  emu = await emulator();
  port = Number(new URL(emu.url).port);
});
afterAll(() => emu.close());

/** One request as raw bytes; the status and the parsed JSON body. */
async function raw(request: string, to = port): Promise<{ status: number; body: any }> {
  const text = await new Promise<string>((resolve) => {
    const socket = net.connect(to, "127.0.0.1", () => socket.write(request));
    let out = "";
    socket.on("data", (chunk) => (out += chunk));
    socket.on("close", () => resolve(out));
    socket.on("error", () => resolve(out));
  });
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), body: body ? JSON.parse(body) : undefined };
}

function request(method: string, path: string, headers: Record<string, string>, body = ""): string {
  const lines = Object.entries({ connection: "close", ...headers, ...(body && { "content-length": String(Buffer.byteLength(body)) }) }).map(([k, v]) => `${k}: ${v}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n${body}`;
}

describe("the control API", () => {
  it("answers loopback names and addresses only: a DNS-rebinding page's Host is refused", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.8.9.10:${port}`, `dev.localhost:${port}`]) {
      expect([host, (await raw(request("GET", "/_emulator/state", { host }))).status]).toEqual([host, 200]);
    }
    for (const host of [`attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`, `192.168.1.10:${port}`, "", `[::2]:${port}`]) {
      const res = await raw(request("GET", "/_emulator/outbox", { host }));
      expect([host, res.status, res.body]).toEqual([host, 403, { success: false, error: "forbidden_host", msg: expect.stringContaining("loopback") }]);
    }
    // Spelt so that its raw URL does not start with /_emulator/, a control path is still the control API.
    for (const target of ["/%5Femulator/outbox", "/%5femulator/state", `http://127.0.0.1:${port}/_emulator/outbox`]) {
      const res = await raw(request("GET", target, { host: `attacker.example:${port}` }));
      expect([target, res.status, res.body?.error]).toEqual([target, 403, "forbidden_host"]);
      const origin = await raw(request("POST", target.replace(/(outbox|state)$/, "clock/advance"), { host: `127.0.0.1:${port}`, origin: "https://attacker.example", "content-type": "text/plain" }, '{"ms": 1}'));
      expect([target, origin.status, origin.body?.error]).toEqual([target, 403, "forbidden_origin"]);
    }
    // The API itself is not the control API: it needs a key, not a loopback name.
    expect((await raw(request("GET", "/api/v0/users/current/", { host: "emulator:8080", authorization: `Bearer ${emu.apiKey}` }))).status).toBe(200);
  });

  it("refuses another site's page, a cross-site text/plain or form POST included, and changes nothing", async () => {
    const before = emu.marketplace.clock.now();
    const host = `127.0.0.1:${port}`;
    const attempts = [
      request("POST", "/_emulator/clock/advance", { host, origin: "https://attacker.example", "content-type": "text/plain" }, '{"ms": 86400000}'),
      request("POST", "/_emulator/clock/advance", { host, origin: "null", "content-type": "application/json" }, '{"ms": 86400000}'),
      request("POST", "/_emulator/clock/advance", { host, "content-type": "text/plain" }, '{"ms": 86400000}'),
      request("POST", "/_emulator/clock/advance", { host, "content-type": "application/x-www-form-urlencoded" }, "ms=86400000"),
      request("POST", "/_emulator/users", { host, origin: "http://localhost:8888", "content-type": "application/json" }, '{"email": "x@attacker.example"}'),
      request("POST", "/_emulator/clock/advance", { host }, '{"ms": 86400000}'),
    ];
    const answers = [];
    for (const attempt of attempts) answers.push(await raw(attempt));
    expect(answers.map((a) => [a.status, a.body.error])).toEqual([
      [403, "forbidden_origin"],
      [403, "forbidden_origin"],
      [415, "unsupported_media_type"],
      [415, "unsupported_media_type"],
      [403, "forbidden_origin"],
      [415, "unsupported_media_type"],
    ]);
    expect(emu.marketplace.clock.now()).toBe(before);
    // Its own page (same origin), and tools that send no Origin, are served.
    expect((await raw(request("POST", "/_emulator/clock/advance", { host, origin: `http://${host}`, "content-type": "application/json" }, '{"ms": 1000}'))).status).toBe(200);
    expect((await http(emu.url, "POST", "/_emulator/clock/advance", { body: { ms: 1000 } })).status).toBe(200);
    expect(emu.marketplace.clock.now()).toBe(before + 2000);
  });

  it("with --control-token, answers only calls that carry it, and then under any host name", async () => {
    const token = "ci-runner-token-0123456789";
    // No emulated machines: a process killed with SIGKILL cannot remove their folder.
    const guarded = await emulatorProcess(["--control-token", token, "--no-ssh"]);
    try {
      const to = Number(new URL(guarded.url).port);
      const host = `127.0.0.1:${to}`;
      expect((await raw(request("GET", "/_emulator/state", { host }), to)).body.error).toBe("control_token_required");
      expect((await raw(request("GET", "/_emulator/state", { host, "x-emulator-token": "wrong-token-0123456789" }), to)).status).toBe(401);
      expect((await raw(request("GET", "/_emulator/state", { host, "x-emulator-token": token }), to)).status).toBe(200);
      expect((await raw(request("GET", "/_emulator/state", { host: "emulator:8080", "x-emulator-token": token }), to)).status).toBe(200);
      const form = request("POST", "/_emulator/clock/advance", { host, "x-emulator-token": token, origin: "https://attacker.example", "content-type": "text/plain" }, '{"ms":1}');
      expect((await raw(form, to)).status).toBe(403);
    } finally {
      await killHard(guarded);
    }
    await expect(emulatorProcess(["--control-token", "short"])).rejects.toThrow(/at least 16 printable characters/);
  });
});

describe("the edges", () => {
  const host = () => `127.0.0.1:${port}`;

  it("reads ids as decimal digits only, in the control API too", async () => {
    for (const id of ["0x2", "2e0", " 2", "+2", "2.0", "0b10"]) {
      const path = encodeURI(`/_emulator/instances/${id}/outbid`);
      const res = await raw(request("POST", path, { host: host() }));
      expect([id, res.status, res.body.error]).toEqual([id, 400, "invalid_args"]);
      const api = await raw(request("GET", encodeURI(`/api/v0/instances/${id}/`), { host: host(), authorization: `Bearer ${emu.apiKey}` }));
      expect([id, api.status, api.body.error]).toEqual([id, 400, "invalid_args"]);
    }
  });

  it("answers the framework's own refusals with the service's error body and a documented status", async () => {
    const key = { host: host(), authorization: `Bearer ${emu.apiKey}` };
    const cases: [string, string, number, string][] = [
      ["bad escape", request("GET", "/api/v0/instances/%zz/", key), 400, "invalid_args"],
      ["URL over 8 KB", request("GET", `/api/v1/instances/?q=${"a".repeat(9000)}`, key), 414, "uri_too_long"],
      ["headers over 16 KB", request("GET", `/api/v1/instances/?q=${"a".repeat(20000)}`, key), 431, "headers_too_large"],
      ["body over 1 MB", request("POST", "/api/v0/auth/apikeys/", { ...key, "content-type": "application/json" }, JSON.stringify({ name: "x".repeat(1 << 20) })), 413, "invalid_args"],
      ["malformed JSON", request("POST", "/api/v0/auth/apikeys/", { ...key, "content-type": "application/json" }, "{nope"), 400, "invalid_args"],
      ["unknown media type", request("POST", "/api/v0/auth/apikeys/", { ...key, "content-type": "application/xml" }, "<a/>"), 415, "invalid_args"],
      ["not HTTP", "HELLO\r\n\r\n", 400, "invalid_args"],
    ];
    for (const [label, text, status, error] of cases) {
      const res = await raw(text);
      expect([label, res.status, res.body]).toEqual([label, status, { success: false, error, msg: expect.any(String) }]);
    }
  });
});
