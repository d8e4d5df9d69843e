import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Exclusive ownership of a data folder, released by the operating system when its owner dies.
 *
 * Node has no `flock` without a native addon, so the lock is a listening unix socket in the folder: the kernel
 * closes it when the process ends however it ends (`kill -9` included), and a socket file nobody listens on
 * any more refuses connections. Whether a claim is alive is asked of the kernel, never guessed from a pid, so
 * a pid reused by another process, or a lock left by a container or machine that is gone, fools nothing.
 *
 * Taking the folder (see `acquireDataDirLock`):
 * 1. Claim: listen on a socket of a fresh random name, then rename it into place as `claim-<name>.sock`, so
 *    every claim another process can see is already listening.
 * 2. Look at every other claim: connect, say our name, read its answer. A refused connection is a dead claim
 *    (its file is removed: no one else can ever listen under that random name). A claim that answers
 *    "holding" owns the folder: we refuse to start, naming it. A claim that answers "claiming" is a rival
 *    starting at the same moment; so is every claimer that asked us while we looked.
 * 3. Decide, in one step of the event loop: hold if our name is smaller than every rival's, otherwise step
 *    back (remove our claim) and try again shortly.
 *
 * Why two can never both hold: of any two claimers, the one that looks last connects to the other (both
 * claims are in place before either looks). The one asked either had decided already (it answers "holding",
 * the asker refuses) or had not (it answers "claiming" and records the asker): both then decide on the same
 * pair of names, and only the smaller holds. A rival that cannot be asked (it does not answer in time) counts
 * as one that may hold: we step back. Stepping back is always safe; trying again makes sure someone holds.
 *
 * Limits: a folder shared between machines (NFS) sees the other machine's claims as dead, as `flock` does on
 * many network file systems; deleting the claim file of a running emulator by hand removes its lock.
 */

export interface LockHolder {
  pid: number;
  hostname: string;
  /** Epoch ms the holder took the folder. */
  since: number;
  /** Its URL, once it listens. */
  url?: string;
}

export interface DataDirLock {
  readonly holder: LockHolder;
  /** Tells later claimers where the holder listens. */
  describe(url: string): void;
  release(): Promise<void>;
}

export class DataDirInUse extends Error {
  override name = "DataDirInUse";
  constructor(readonly dir: string, readonly holder: LockHolder | undefined) {
    super(
      holder
        ? `${dir} is in use by another emulator (pid ${holder.pid} on ${holder.hostname}${holder.url ? `, at ${holder.url}` : ""}, since ${new Date(holder.since).toISOString()}): stop it, or start this one with another --data-dir`
        : `${dir} is in use by another emulator that does not answer: stop it (or wait for it to finish starting), or start this one with another --data-dir`,
    );
  }
}

const CLAIM = /^claim-[0-9a-f]{16}\.sock$/;
const ANSWER_TIMEOUT_MS = 2_000;
const ATTEMPTS = 8;

/** Takes the folder, or throws DataDirInUse. */
export async function acquireDataDirLock(dir: string): Promise<DataDirLock> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const claim = await Claim.open(dir);
    const outcome = await claim.lookAround();
    if (outcome.holder) {
      await claim.close();
      throw new DataDirInUse(dir, outcome.holder);
    }
    // Synchronous from here to `hold()`: no rival's question can come in between what we know and what we do.
    if (!outcome.unanswered && claim.smallestOf(outcome.rivals)) return claim.hold();
    await claim.close();
    await sleep(10 + Math.random() * 40 * (attempt + 1));
  }
  throw new DataDirInUse(dir, undefined);
}

type Answer = { state: "holding"; holder: LockHolder } | { state: "claiming"; name: string };

class Claim implements DataDirLock {
  holder: LockHolder = { pid: process.pid, hostname: os.hostname(), since: Date.now() };
  /** Rivals that asked us while we were claiming. */
  private readonly heard = new Set<string>();
  private holding = false;
  private closed = false;

  private constructor(private readonly dir: string, private readonly server: net.Server, readonly name: string, readonly file: string) {}

  static async open(dir: string): Promise<Claim> {
    const name = randomBytes(8).toString("hex");
    const staging = path.join(dir, `.claim-${name}.sock`);
    const server = net.createServer();
    // Nobody connects before the rename below puts the claim in place, and `claim` is set by then.
    let claim: Claim | undefined;
    server.on("connection", (socket) => (claim ? claim.answer(socket) : socket.destroy()));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath(staging), () => resolve());
    });
    server.unref();
    claim = new Claim(dir, server, name, path.join(dir, `claim-${name}.sock`));
    // In place only once it listens: a claim another process sees is always one it can ask.
    fs.renameSync(staging, claim.file);
    return claim;
  }

  /** Asks every other claim in the folder what it is; removes the dead ones. */
  async lookAround(): Promise<{ holder?: LockHolder; rivals: string[]; unanswered: boolean }> {
    const others = fs.readdirSync(this.dir).filter((file) => CLAIM.test(file) && file !== path.basename(this.file));
    const answers = await Promise.all(others.map((file) => this.ask(path.join(this.dir, file))));
    const holding = answers.find((answer): answer is { state: "holding"; holder: LockHolder } => answer !== "dead" && answer !== "silent" && answer.state === "holding");
    const rivals = answers.flatMap((answer) => (answer !== "dead" && answer !== "silent" && answer.state === "claiming" ? [answer.name] : []));
    return { holder: holding?.holder, rivals, unanswered: answers.includes("silent") };
  }

  smallestOf(rivals: string[]): boolean {
    return [...rivals, ...this.heard].every((rival) => this.name < rival);
  }

  hold(): DataDirLock {
    this.holding = true;
    this.holder = { ...this.holder, since: Date.now() };
    return this;
  }

  describe(url: string): void {
    this.holder = { ...this.holder, url };
  }

  async release(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The file first: from then on no one can reach this claim, and it is gone from the folder.
    fs.rmSync(this.file, { force: true });
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** One rival's question: its name, on one line. The answer is decided and sent in the same step. */
  answer(socket: net.Socket): void {
    let text = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk) => {
      text += chunk;
      if (!text.includes("\n")) return;
      const rival = text.split("\n")[0].trim();
      let answer: Answer;
      if (this.holding) answer = { state: "holding", holder: this.holder };
      else {
        if (/^[0-9a-f]{16}$/.test(rival)) this.heard.add(rival);
        answer = { state: "claiming", name: this.name };
      }
      socket.end(JSON.stringify(answer) + "\n");
    });
  }

  private ask(file: string): Promise<Answer | "dead" | "silent"> {
    return new Promise((resolve) => {
      const socket = net.connect(socketPath(file));
      let text = "";
      const done = (result: Answer | "dead" | "silent") => {
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const timer = setTimeout(() => done("silent"), ANSWER_TIMEOUT_MS);
      socket.setEncoding("utf8");
      socket.on("connect", () => socket.write(this.name + "\n"));
      socket.on("data", (chunk) => {
        text += chunk;
        if (!text.includes("\n")) return;
        try {
          done(JSON.parse(text.split("\n")[0]) as Answer);
        } catch {
          done("silent");
        }
      });
      socket.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code === "ECONNREFUSED" || error.code === "ENOENT") {
          // Nobody listens there, and nobody ever will again under that random name: a dead claim.
          fs.rmSync(file, { force: true });
          done("dead");
        } else done("silent");
      });
      socket.on("end", () => done("silent"));
    });
  }
}

/**
 * A unix socket's path is limited to about 100 bytes. A longer one is reached through the folder's entry in
 * /proc/self/fd (Linux): the same file, by a short name.
 */
function socketPath(file: string): string {
  if (Buffer.byteLength(file) < 100) return file;
  if (process.platform !== "linux") throw new Error(`the data dir path is too long for its lock socket (${file}): use a shorter --data-dir`);
  const dir = path.dirname(file);
  let fd = longDirs.get(dir);
  if (fd === undefined) longDirs.set(dir, (fd = fs.openSync(dir, "r")));
  return `/proc/self/fd/${fd}/${path.basename(file)}`;
}

/** One open descriptor per long data dir path, for the life of the process. */
const longDirs = new Map<string, number>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
