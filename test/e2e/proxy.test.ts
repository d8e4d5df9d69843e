import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { ForwardProxy } from "../helpers/forward-proxy";
import { TestStack } from "../helpers/pulumi-stack";

/**
 * The root stack applied from behind an egress proxy: the service's name resolves only through the proxy, so
 * the engine's provider host (which inherits the environment) reaches it only by honouring HTTP_PROXY.
 */
it("deploys and destroys through HTTP_PROXY", async () => {
  const emu: TestEmulator = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
  const proxy = await ForwardProxy.start();
  const stack = new TestStack(`proxy-${process.pid}`, { HTTP_PROXY: proxy.url, NO_PROXY: "" });
  try {
    const apiUrl = `http://gpu-service.test:${new URL(emu.url).port}`;
    await stack.init({ "gpu-rental:apiUrl": apiUrl }, { "gpu-rental:apiKey": emu.apiKey });
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 2 created/);
    expect(emu.marketplace.instances.all()).toHaveLength(1);
    expect(proxy.seen.filter((line) => line.startsWith("PUT gpu-service.test"))).toHaveLength(1);
    await stack.ok("destroy", "--yes");
    expect(emu.marketplace.instances.all()).toHaveLength(0);
  } finally {
    await stack.dispose();
    await proxy.close();
    await emu.close();
  }
}, 180_000);
