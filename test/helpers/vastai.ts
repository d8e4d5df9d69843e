import { execFile } from "node:child_process";
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

/**
 * Runs the `vastai` command against an emulator as a user would, with `--url` and `--api-key`, in a home of
 * its own (its key files, role and caches go there, never into the user's), with no update check.
 */
export class VastaiCli {
  private readonly home = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-vastai-"));

  private constructor(
    private readonly program: string,
    private readonly url: string,
    private readonly key: string,
  ) {}

  static async install(python: Python, url: string, key: string): Promise<VastaiCli> {
    const env = await venv("vastai", python, VASTAI_REQUIREMENTS);
    return new VastaiCli(env.bin("vastai"), url, key);
  }

  /** The file the client keeps a 2FA session key in (`vastai tfa login` writes it). */
  get tfaKeyFile(): string {
    return path.join(this.home, ".config", "vastai", "vast_tfa_key");
  }

  /** `vastai <args> --url <emulator> --api-key <key>`; `stdin` answers the client's prompts. */
  run(args: string[], options: { stdin?: string; key?: string } = {}): Promise<CliResult> {
    const env = {
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
    // Global options first: `--args` takes the rest of the command line.
    const argv = ["--url", this.url, "--api-key", options.key ?? this.key, ...args];
    return new Promise((resolve) => {
      const child = execFile(this.program, argv, { env, timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? null) : 0;
        resolve({ code: typeof code === "number" ? code : null, stdout, stderr });
      });
      child.stdin?.end(options.stdin ?? "");
    });
  }

  /** `run` with `--raw`, its output read as JSON; a command that printed no JSON fails with what it said. */
  async raw<T = any>(args: string[], options: { stdin?: string; key?: string } = {}): Promise<T> {
    const result = await this.run(["--raw", ...args], options);
    try {
      return JSON.parse(result.stdout) as T;
    } catch {
      throw new Error(`vastai ${args.join(" ")} printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
  }

  /** `run`, failing with what the client said unless it exited 0 and printed nothing to stderr but warnings. */
  async ok(args: string[], options: { stdin?: string; key?: string } = {}): Promise<string> {
    const result = await this.run(args, options);
    if (result.code !== 0 || /Traceback|Failed with error|Error:/.test(result.stdout + result.stderr)) {
      throw new Error(`vastai ${args.join(" ")} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
    }
    return result.stdout;
  }

  close(): void {
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}
