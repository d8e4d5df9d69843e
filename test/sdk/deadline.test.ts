import * as net from "node:net";
import { GpuRentalClient, NetworkError } from "../../sdk";

/**
 * A service that accepts connections but never answers (a stuck load balancer, a frozen process) must not hold
 * a pipeline for minutes: every call has an overall deadline, its retries included.
 */
describe("a service that accepts connections and never answers", () => {
  const servers: { server: net.Server; sockets: Set<net.Socket> }[] = [];

  /** A service of its own for each test: no connection of another test's client can reach it. */
  async function silentService(): Promise<{ server: net.Server; url: string }> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    servers.push({ server, sockets });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` };
  }
  afterAll(async () => {
    for (const { server, sockets } of servers) {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const timed = async (client: GpuRentalClient) => {
    const started = Date.now();
    const error = await client.users.current().catch((e) => e);
    return { error, seconds: (Date.now() - started) / 1000 };
  };

  it("fails with a clear error at the call's deadline, having tried more than once", async () => {
    const { url } = await silentService();
    const { error, seconds } = await timed(new GpuRentalClient({ apiUrl: url, apiKey: "k", timeoutMs: 400, callDeadlineMs: 2_000 }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/no answer within 0\.[0-4] s from http:\/\/127\.0\.0\.1:\d+\. Is the service reachable\? \(gave up after [2-9] tries in 2\.0 s, the call's deadline\)/);
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(2.6);
  });

  /**
   * The default deadline by value, not waited out: the call's clock (Date.now, which the client reads for its
   * deadline) jumps 44.5 s when the first try reaches the service, which resets it. The retry that follows gets
   * only what is left of 45 s as its timeout, and the call ends at the deadline, naming it.
   */
  it("gives up at 45 s with the default settings", async () => {
    // Its own service: the reset below meets this test's first try (a connection of the test before, still open,
    // once took it and the try waited out its 15 s).
    const { server, url } = await silentService();
    const realNow = Date.now.bind(Date);
    let skippedMs = 0;
    const clock = jest.spyOn(Date, "now").mockImplementation(() => realNow() + skippedMs);
    const resetFirst = (socket: net.Socket) => {
      skippedMs = 44_500;
      socket.resetAndDestroy();
    };
    server.once("connection", resetFirst);
    try {
      const started = Date.now();
      const { error } = await timed(new GpuRentalClient({ apiUrl: url, apiKey: "k" }));
      const seconds = (Date.now() - started) / 1000;
      expect(skippedMs).toBe(44_500);
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toMatch(/no answer within 0\.[0-5] s from http:\/\/127\.0\.0\.1:\d+\. Is the service reachable\? \(gave up after [2-9] tries in 45 s, the call's deadline\)/);
      expect(seconds).toBeGreaterThan(44.5);
      expect(seconds).toBeLessThanOrEqual(45.5);
    } finally {
      server.off("connection", resetFirst);
      clock.mockRestore();
    }
  });
});
