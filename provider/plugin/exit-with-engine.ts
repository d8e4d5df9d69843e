import * as fs from "node:fs";
import { once } from "../../sdk/once";
// The module object itself (not an import's read-only view of it): its createServer is wrapped below.
import http2 = require("node:http2");

/**
 * The plugin process ends with the engine that started it. The engine stops a plugin with SIGINT when it is done
 * with it, but a `pulumi` that ends otherwise (killed, crashed, or a command such as `pulumi install` that never
 * closes the plugins it loaded) leaves it running, with its memory and port, for ever. So the plugin also stops:
 * - when the engine's connection closes and none follows within `graceMs` (the engine closed it, or is gone);
 * - when its parent is gone: the pipe the engine gives it as stdin ends (at once), or, where stdin is not a pipe
 *   (a terminal, /dev/null), its parent process id changes (checked every `pollMs`).
 * It stops as on SIGTERM, raised on itself: whatever the process does on a signal (answer what is under way, then
 * exit) runs the same way, and without a handler the signal ends it.
 */
export function exitWithEngine(options: { graceMs?: number; pollMs?: number } = {}): void {
  const stop = once(() => process.kill(process.pid, "SIGTERM"));
  watchConnections(options.graceMs ?? 1000, stop);
  watchParent(options.pollMs ?? 1000, stop);
}

/**
 * Counts the HTTP/2 sessions (gRPC connections) of every server made from now on (the gRPC server is made later,
 * when the provider serves), and calls `closed` once the last one has been gone for `graceMs`.
 */
function watchConnections(graceMs: number, closed: () => void): void {
  const createServer = http2.createServer;
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const watch = (server: http2.Http2Server) =>
    server.on("session", (session) => {
      open++;
      clearTimeout(timer);
      session.once("close", () => {
        if (--open === 0) timer = setTimeout(closed, graceMs).unref();
      });
    });
  http2.createServer = ((...args: Parameters<typeof createServer>) => watch(createServer(...args))) as typeof createServer;
}

function watchParent(pollMs: number, gone: () => void): void {
  if (isPipe(0)) {
    // Read and dropped: the engine writes nothing, and the end of the pipe is the end of the engine.
    process.stdin.on("data", () => undefined).once("end", gone).resume();
    return;
  }
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && gone(), pollMs).unref();
}

/** A pipe, or the socket pair Node gives a child as its stdin pipe. */
function isPipe(fd: number): boolean {
  try {
    const stat = fs.fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}
