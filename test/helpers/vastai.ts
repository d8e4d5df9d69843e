import { ChildProcess, execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Python, venv } from "./python";

/** The service's public Python client, exactly as users install it from PyPI. */
export const VASTAI_REQUIREMENTS = ["vastai==1.9.1"];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

type CliOptions = { stdin?: string; key?: string };

const TIMEOUT_MS = 60_000;

/**
 * Runs the `vastai` command against an emulator as a user would, with `--url` and `--api-key`, in a home of
 * its own (its key files, role and caches go there, never into the user's), with no update check.
 *
 * `run` goes through a fork server (vastai-forkserver.py), as calls each starting Python afresh cost much CPU
 * (docs/testing.md), most of it importing aiohttp, requests, pkg_resources and the like before the client does anything.
 * Each call is still a fresh process running the console script's own entry point (`bin/vastai`'s `from
 * vastai.cli.main import main; sys.exit(main())`, vastai imported anew) with the same argv, environment and
 * stdio as the executable gets: only the interpreter and the third-party libraries are loaded before the fork.
 * `runProcess` runs the executable itself, as before; a test checks that both print the same.
 */
export class VastaiCli {
  private readonly home = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-vastai-"));
  private readonly env: Record<string, string>;
  private server?: ForkServer;

  private constructor(
    private readonly python: string,
    private readonly program: string,
    private readonly url: string,
    private readonly key: string,
  ) {
    this.env = {
      PATH: process.env.PATH ?? "",
      HOME: this.home,
      XDG_CONFIG_HOME: path.join(this.home, ".config"),
      XDG_CACHE_HOME: path.join(this.home, ".cache"),
      XDG_STATE_HOME: path.join(this.home, ".state"),
      XDG_DATA_HOME: path.join(this.home, ".local", "share"),
      // Calls the client makes before reading --url (the GPU names at start) go to the emulator too.
      VAST_URL: this.url,
      VASTAI_NO_UPDATE_CHECK: "1",
      COLUMNS: "250",
      LANG: "C.UTF-8",
      PYTHONIOENCODING: "utf-8",
    };
  }

  static async install(python: Python, url: string, key: string): Promise<VastaiCli> {
    const env = await venv("vastai", python, VASTAI_REQUIREMENTS);
    return new VastaiCli(env.bin("python"), env.bin("vastai"), url, key);
  }

  /** The file the client keeps a 2FA session key in (`vastai tfa login` writes it). */
  get tfaKeyFile(): string {
    return path.join(this.home, ".config", "vastai", "vast_tfa_key");
  }

  /** `vastai <args> --url <emulator> --api-key <key>`; `stdin` answers the client's prompts. */
  run(args: string[], options: CliOptions = {}): Promise<CliResult> {
    // No fork on Windows: the executable there.
    if (process.platform === "win32") return this.runProcess(args, options);
    // Started with the calls' environment: modules that read it on import (xdg's folders) see theirs.
    this.server ??= new ForkServer(this.python, this.program, this.env);
    return this.server.call(this.argv(args, options), this.env, options.stdin ?? "");
  }

  /** `run` by the console script `bin/vastai` run as a process of its own. */
  runProcess(args: string[], options: CliOptions = {}): Promise<CliResult> {
    return new Promise((resolve) => {
      const child = execFile(this.program, this.argv(args, options), { env: this.env, timeout: TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? null) : 0;
        resolve({ code: typeof code === "number" ? code : null, stdout, stderr });
      });
      child.stdin?.end(options.stdin ?? "");
    });
  }

  private argv(args: string[], options: CliOptions): string[] {
    // Global options first: `--args` takes the rest of the command line.
    return ["--url", this.url, "--api-key", options.key ?? this.key, ...args];
  }

  /** `run` with `--raw`, its output read as JSON; a command that printed no JSON fails with what it said. */
  async raw<T = any>(args: string[], options: CliOptions = {}): Promise<T> {
    const result = await this.run(["--raw", ...args], options);
    try {
      return JSON.parse(result.stdout) as T;
    } catch {
      throw new Error(`vastai ${args.join(" ")} printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  }

  /** `run`, failing with what the client said unless it exited 0 and printed nothing to stderr but warnings. */
  async ok(args: string[], options: CliOptions = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0 || /Traceback|Failed with error|Error:/.test(result.stdout + result.stderr)) {
      throw new Error(`vastai ${args.join(" ")} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
    return result.stdout;
  }

  /**
   * Runs `code` with the client's own Python API (`from vastai.sdk import VastAI`) in the client's environment, its
   * `vast` a VastAI of the emulator and key: for what the command line cannot do (1.9.1's `execute` command reads
   * the text its API call returns as a dict). Resolves with what it printed; fails with what it said otherwise.
   */
  pythonApi(code: string): Promise<string> {
    const prelude = `from vastai.sdk import VastAI\nvast = VastAI(api_key=${JSON.stringify(this.key)}, server_url=${JSON.stringify(this.url)})\n`;
    return new Promise((resolve, reject) => {
      execFile(this.python, ["-c", prelude + code], { env: this.env, timeout: TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
        error ? reject(new Error(`python failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
      );
    });
  }

  close(): void {
    this.server?.close();
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** The Node side of vastai-forkserver.py: a JSON line per call on its stdin, its reply line by id on its stdout. */
class ForkServer {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (result: CliResult) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private failure?: Error;

  constructor(python: string, script: string, env: Record<string, string>) {
    // stdio "pipe", as execFile gives the executable: the child keeps the sys.stdin/stdout/stderr made for them.
    this.child = spawn(python, [path.join(__dirname, "vastai-forkserver.py"), script], { env, stdio: "pipe" });
    let lines = "";
    let stderr = "";
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      lines += chunk;
      for (let end = lines.indexOf("\n"); end >= 0; end = lines.indexOf("\n")) {
        const { id, code, stdout, stderr } = JSON.parse(lines.slice(0, end));
        lines = lines.slice(end + 1);
        this.waiting.get(id)?.resolve({ code, stdout, stderr });
        this.waiting.delete(id);
      }
    });
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const fail = (why: string) => {
      this.failure ??= new Error(`the vastai fork server ${why}${stderr ? `:\n${stderr}` : ""}`);
      for (const { reject } of this.waiting.values()) reject(this.failure);
      this.waiting.clear();
    };
    this.child.on("error", (error) => fail(`failed to start (${error.message})`));
    this.child.stdin!.on("error", () => undefined); // a server gone: "close" says why
    this.child.on("close", (code, signal) => fail(`exited (${signal ?? code})`));
  }

  call(argv: string[], env: Record<string, string>, stdin: string): Promise<CliResult> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, argv, env, cwd: process.cwd(), stdin, timeout: TIMEOUT_MS })}\n`);
    });
  }

  /** Ends its stdin: it exits once the calls running are answered. */
  close(): void {
    this.child.stdin!.end();
  }
}
