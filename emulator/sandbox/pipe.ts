import type { Socket } from "node:net";

/**
 * Pipes two connections into each other until either ends; an error or a close on one ends the other. The one way
 * bytes cross between an emulated machine's network and this computer's: in the emulator (./network.ts) and in the
 * relay inside the machine's network (./relay.ts).
 */
export function pipeBoth(a: Socket, b: Socket): void {
  for (const [one, other] of [[a, b], [b, a]]) {
    one.on("error", () => other.destroy());
    one.on("close", () => other.destroy());
    one.pipe(other);
  }
}
