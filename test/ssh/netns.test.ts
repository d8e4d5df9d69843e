import * as nodeHttp from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import { http, TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, instance, registerKey, sshEmulator, userKey } from "./machines";
import { exec } from "../../sdk";
import { MACHINE_MARK, markedProcesses, NO_NETNS } from "../../emulator";
import { ownNetworkUnsupported } from "../../emulator/sandbox/network";
import { scratchFolders } from "../helpers/paths";

/** Each machine in a network of its own, its published ports really served on loopback (emulator/sandbox/network.ts). */

const folder = scratchFolders("netns");
const unsupported = ownNetworkUnsupported();
if (unsupported) console.warn(`Machines cannot have networks of their own here (${unsupported}): the tests of that are skipped.`);

/** An onstart that serves, on `port`, a file answering the instance's id and the host port it learnt from its env. */
const serving = (port: number) =>
  `mkdir -p www; echo "$CONTAINER_ID $VAST_TCP_PORT_${port}" > www/id; ` +
  `nohup python3 -m http.server ${port} --bind 127.0.0.1 --directory www > server.log 2>&1 &`;

/** What the server behind a host port answers at /id, polled until it listens (python's start) or the deadline. */
async function served(hostPort: number, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${hostPort}/id`);
      if (res.ok) return await res.text();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether a TCP connection to the loopback port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.on("connect", () => (socket.destroy(), resolve(false)));
    socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

(unsupported ? describe.skip : describe)("a machine's own network", () => {
  let emu: TestEmulator;
  let key: ReturnType<typeof userKey>;
  const run = (view: any, command: string) => exec(view, command, { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey });

  beforeAll(async () => {
    const dir = folder();
    key = userKey(dir);
    emu = await sshEmulator(dir);
    await registerKey(emu, key.publicKey);
  });
  afterAll(() => emu?.close());

  it("lets two instances serve one container port, each reached on its own published port, and ends it all at stop", async () => {
    expect((await http(emu.url, "GET", "/_emulator/machines")).body).toEqual({ onstart: true, own_network: true });
    const ids = [await createInstance(emu, { env: { "-p 8000:8000": "1" }, onstart: serving(8000) }), await createInstance(emu, { env: { "-p 8000:8000": "1" }, onstart: serving(8000) })];
    const views = [];
    for (const id of ids) views.push(await bootToRunning(emu, id));
    const hostPorts = views.map((view) => {
      expect(view.public_ipaddr).toBe("127.0.0.1");
      expect(view.ports["8000/tcp"]).toEqual([{ HostIp: "127.0.0.1", HostPort: expect.stringMatching(/^\d+$/) }]);
      return Number(view.ports["8000/tcp"][0].HostPort);
    });
    expect(hostPorts[0]).not.toBe(hostPorts[1]);
    // Each answers its own id and the port its env says it is published on: the one the view shows.
    expect(await Promise.all(hostPorts.map((port) => served(port)))).toEqual(ids.map((id, i) => `${id} ${hostPorts[i]}\n`));

    // Inside, over SSH, localhost:8000 is the machine's own server, and the emulator's API is reached at its URL;
    // the env tells where the machine is reached.
    const both = `Promise.all([fetch("http://localhost:8000/id").then((r) => r.text()), fetch(process.argv[1]).then((r) => r.status)]).then(([id, status]) => console.log(id.trim(), status))`;
    const inside = await run(views[0], `node -e '${both}' ${emu.url}/_emulator/machines; echo "$PUBLIC_IPADDR $VAST_TCP_PORT_22"`);
    expect(inside.stdout).toBe(`${ids[0]} ${hostPorts[0]} 200\n127.0.0.1 ${views[0].ssh_port}\n`);

    await http(emu.url, "PUT", `/api/v0/instances/${ids[0]}/`, { key: emu.apiKey, body: { state: "stopped" } });
    expect(await refused(hostPorts[0])).toBe(true);
    // Its namespaces, its relay and its server are gone with it; the other machine serves on.
    await until(() => markedProcesses(MACHINE_MARK, `${emu.ssh!.machines.markPrefix}${ids[0]}`).length === 0);
    expect((await instance(emu, ids[0])).ports["8000/tcp"][0].HostPort).not.toBe(String(hostPorts[0]));
    expect(await served(hostPorts[1])).toBe(`${ids[1]} ${hostPorts[1]}\n`);
  });

  it("goes out through the emulator's proxy (HTTP_PROXY), as a machine on the service reaches the internet, but not to this computer's loopback", async () => {
    // A server on this computer's own network address: the "internet" as the machine sees it.
    const address = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    expect(address).toBeDefined();
    const outside = nodeHttp.createServer((_req, res) => res.end("from outside\n"));
    await new Promise<void>((resolve) => outside.listen(0, address, resolve));
    const port = (outside.address() as net.AddressInfo).port;
    try {
      const view = await bootToRunning(emu, await createInstance(emu, { env: { "-p 8000:8000": "1" } }));
      const fetchWith = (url: string) => `python3 -c 'import urllib.request,sys; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())' ${url} 2>&1 | tail -1`;
      const direct = `python3 -c 'import socket; s=socket.socket(); s.settimeout(2); print(s.connect_ex(("${address}", ${port})))'`;
      const apiPort = emu.url.split(":").pop();
      const loopbacks = [`http://127.0.0.2:${apiPort}/`, `http://[::ffff:127.0.0.1]:${apiPort}/`, `http://localhost.:${apiPort}/`, `http://2130706433:${apiPort}/`];
      const inside = await run(view, [fetchWith(`http://${address}:${port}/`), direct, ...loopbacks.map(fetchWith)].join("; "));
      const [proxied, connect, ...loopback] = inside.stdout.trim().split("\n");
      expect(proxied).toBe("from outside");
      // Without the proxy there is no route out of its namespace, and through it this computer's loopback is refused,
      // however it is written.
      expect(connect).not.toBe("0");
      expect(loopback).toEqual(loopbacks.map(() => expect.stringMatching(/403/)));
    } finally {
      outside.close();
    }
  });
});

describe(`machines in this computer's network (${NO_NETNS})`, () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    process.env[NO_NETNS] = "1";
    try {
      emu = await sshEmulator(folder());
    } finally {
      delete process.env[NO_NETNS];
    }
  });
  afterAll(() => emu?.close());

  it("says so in its status, and still publishes a container port on loopback", async () => {
    expect((await http(emu.url, "GET", "/_emulator/machines")).body).toEqual({ onstart: true, own_network: false, network_why: `${NO_NETNS} is set` });
    const port = await freePort();
    const id = await createInstance(emu, { env: { [`-p ${port}:${port}`]: "1" }, onstart: serving(port) });
    const hostPort = Number((await bootToRunning(emu, id)).ports[`${port}/tcp`][0].HostPort);
    expect(hostPort).not.toBe(port);
    expect(await served(hostPort)).toBe(`${id} ${hostPort}\n`);
  });
});

/** A loopback port nothing listens on now: the container port of a machine in this computer's network. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
