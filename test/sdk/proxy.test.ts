import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { GpuRentalClient, NetworkError } from "../../sdk";
import { isLoopback } from "../../sdk/proxy";
import { emulator, TestEmulator } from "../helpers/emulator";
import { ForwardProxy } from "../helpers/forward-proxy";
import { REPO_ROOT } from "../helpers/paths";

const run = promisify(execFile);
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];

let emu: TestEmulator;
let proxy: ForwardProxy;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  emu = await emulator();
  proxy = await ForwardProxy.start();
  for (const name of PROXY_VARS) saved[name] = process.env[name];
});
afterAll(async () => {
  await proxy.close();
  await emu.close();
});
afterEach(() => {
  for (const name of PROXY_VARS) if (saved[name] === undefined) delete process.env[name];
  else process.env[name] = saved[name];
});

const port = () => new URL(emu.url).port;
const client = (apiUrl: string) => new GpuRentalClient({ apiUrl, apiKey: emu.apiKey, retries: 0, timeoutMs: 5_000 });

it("reaches the service through HTTP_PROXY, as a CI runner behind an egress proxy must", async () => {
  process.env.HTTP_PROXY = proxy.url;
  const offers = await client(`http://gpu-service.test:${port()}`).offers.search({ limit: 2 });
  expect(offers).toHaveLength(2);
  expect(proxy.seen).toContain(`POST gpu-service.test:${port()}`);
});

it("goes direct for the hosts NO_PROXY names", async () => {
  process.env.HTTP_PROXY = proxy.url;
  process.env.NO_PROXY = "localhost,.service.test";
  const before = proxy.seen.length;
  // Only the proxy knows .test names: a direct request cannot resolve it.
  await expect(client(`http://gpu.service.test:${port()}`).offers.search({ limit: 1 })).rejects.toThrow(NetworkError);
  expect(proxy.seen.length).toBe(before);
});

it("never sends a loopback emulator through a proxy, whatever the environment says", async () => {
  process.env.HTTP_PROXY = "http://127.0.0.1:9"; // nothing listens there
  process.env.HTTPS_PROXY = "http://127.0.0.1:9";
  expect(await client(emu.url).offers.search({ limit: 1 })).toHaveLength(1);
  expect(await client(emu.url.replace("127.0.0.1", "localhost")).offers.search({ limit: 1 })).toHaveLength(1);
  expect(["127.0.0.1", "127.8.9.10", "localhost", "api.localhost", "[::1]", "::1"].every(isLoopback)).toBe(true);
  expect(["10.0.0.1", "gpu.example.com", "127.example.com", "::2"].some(isLoopback)).toBe(false);
});

it("tunnels HTTPS through CONNECT with HTTPS_PROXY, keeping TLS end to end (a process of its own, as a CI job is)", async () => {
  // A TLS front for the emulator, with a certificate the client trusts through NODE_EXTRA_CA_CERTS.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-tls-"));
  const [key, cert] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
    "-subj", "/CN=gpu-service.test", "-addext", "subjectAltName=DNS:gpu-service.test"], { stdio: "ignore" });
  const front = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    const upstream = require("node:http").request({ host: "127.0.0.1", port: port(), path: req.url, method: req.method, headers: req.headers }, (answer: any) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const frontPort = (front.address() as net.AddressInfo).port;
  try {
    const script = `const { GpuRentalClient } = require("gpu-rental/sdk");
      new GpuRentalClient({ retries: 0 }).offers.search({ limit: 3 }).then((offers) => console.log(offers.length));`;
    const env = { ...process.env, HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: cert, GPU_RENTAL_API_URL: `https://gpu-service.test:${frontPort}`, GPU_RENTAL_API_KEY: emu.apiKey };
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: REPO_ROOT, env });
    expect(stdout.trim()).toBe("3");
    expect(proxy.seen).toContain(`CONNECT gpu-service.test:${frontPort}`);
  } finally {
    front.closeAllConnections();
    await new Promise((resolve) => front.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
