import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ensureToolchain } from "../../cli/toolchain";
import { exec } from "../../sdk";
import { LocalRegistry } from "../helpers/local-registry";
import { REPO_ROOT } from "../helpers/provider-host";
import { tarball } from "../helpers/user-program";

/**
 * The sections of a docs page as one shell script: their `sh` blocks as they are, their `title="file"` blocks
 * written to those files, in order (the README test's convention).
 */
export function scriptOf(page: string, sections: string[]): string {
  const text = fs.readFileSync(path.join(REPO_ROOT, "docs", page), "utf8");
  return sections
    .map((title) => {
      const start = text.indexOf(`## ${title}\n`);
      if (start < 0) throw new Error(`docs/${page} has no section "${title}"`);
      const end = text.indexOf("\n## ", start + 1);
      const section = text.slice(start, end < 0 ? undefined : end);
      return [...section.matchAll(/```(\w+)(?: title="([^"]+)")?\n([\s\S]*?)```/g)]
        .map(([, lang, file, body]) => (file ? `cat > ${file} <<'DOCS_FILE_END'\n${body}DOCS_FILE_END` : lang === "sh" ? body : ""))
        .filter(Boolean)
        .join("\n");
    })
    .join("\n");
}

/**
 * The sections of a docs page as a script against a test's emulator: its address and key stand for the docs'
 * (`http://127.0.0.1:8765`, `local-dev-key-1`), and a second account's key for `team-dev-key-1`.
 */
export function scriptAgainst(emu: { url: string; apiKey: string }, page: string, sections: string[], teamKey?: string): string {
  const script = scriptOf(page, sections).replaceAll("http://127.0.0.1:8765", emu.url).replaceAll("local-dev-key-1", emu.apiKey);
  return teamKey ? script.replaceAll("team-dev-key-1", teamKey) : script;
}

/** Puts key pairs where a user keeps them: `~/.ssh/<name>` (the private half, 0600) and `~/.ssh/<name>.pub`. */
export function writeUserKeys(machine: DocMachine, keys: Record<string, { private: string; public: string }>): void {
  const dir = path.join(machine.home, ".ssh");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [name, key] of Object.entries(keys)) {
    fs.writeFileSync(path.join(dir, name), key.private, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, `${name}.pub`), `${key.public}\n`);
  }
}

/**
 * Logs in with a private key where a program's `ssh -p <port> root@<host>` output says (the emulator's host key
 * checked) and answers `logged in to <instance id>`; an SshError when the key is refused.
 */
export async function loginWith(emu: { ssh?: { hostPublicKey: string } }, sshCommand: string, privateKey: string): Promise<string> {
  const [, port, host] = /-p (\d+) root@(\S+)/.exec(sshCommand) ?? [];
  if (!port) throw new Error(`not an ssh command: ${sshCommand}`);
  const result = await exec({ host, port: Number(port) }, 'echo "logged in to $CONTAINER_ID"', { privateKey, hostKey: emu.ssh?.hostPublicKey, timeoutMs: 30_000 });
  return result.stdout.trim();
}

export interface Run {
  code: number;
  output: string;
}

/**
 * A user's machine for one docs page: a home folder of its own outside the repository (Pulumi home, a local file
 * backend, npm's real cache), the toolchain's `pulumi` on PATH, and the packed package served as `gpu-rental` by a
 * local registry. Every command's output is kept, for the checks that secrets never show.
 */
export class DocMachine {
  readonly transcript: string[] = [];

  private constructor(
    readonly home: string,
    readonly env: NodeJS.ProcessEnv,
    private readonly registry: LocalRegistry,
  ) {}

  static async start(name: string): Promise<DocMachine> {
    const registry = await LocalRegistry.start(tarball());
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`));
    fs.mkdirSync(path.join(home, "backend"));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      npm_config_cache: path.join(os.homedir(), ".npm"),
      npm_config_registry: registry.url,
      npm_config_prefer_offline: "true",
      PIP_CACHE_DIR: path.join(os.homedir(), ".cache", "pip"),
      // Go's module and build caches are the user's own, not under this machine's home folder.
      ...goCaches(),
      GPU_RENTAL_CACHE: process.env.GPU_RENTAL_CACHE ?? path.join(os.homedir(), ".cache", "gpu-rental"),
      PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}`,
      PULUMI_HOME: path.join(home, ".pulumi"),
      PULUMI_BACKEND_URL: `file://${path.join(home, "backend")}`,
      PULUMI_CONFIG_PASSPHRASE: "a-passphrase-of-the-test",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    };
    delete env.GPU_RENTAL_API_URL;
    delete env.GPU_RENTAL_API_KEY;
    return new DocMachine(home, env, registry);
  }

  /** Runs a bash script in `cwd` (relative to the home folder), without failing on a non-zero exit. */
  run(script: string, cwd = ".", record = true): Promise<Run> {
    const child = spawn("bash", ["-e", "-c", script], { cwd: path.resolve(this.home, cwd), env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    return new Promise((resolve) =>
      child.on("close", (code) => {
        if (record) this.transcript.push(output);
        resolve({ code: code ?? 1, output });
      }),
    );
  }

  /** Runs and requires success; returns the output. */
  async ok(script: string, cwd = "."): Promise<string> {
    const { code, output } = await this.run(script, cwd);
    if (code !== 0) throw new Error(`\`${script}\` exited ${code}:\n${output}`);
    return output;
  }

  /** A secret stack output's value, shown only to the test (kept out of the transcript that is checked for it). */
  async secretOutput(name: string, programDir: string): Promise<string> {
    const { code, output } = await this.run(`pulumi stack output ${name} --show-secrets`, programDir, false);
    if (code !== 0 || !output.trim()) throw new Error(`pulumi stack output ${name} exited ${code}: ${output}`);
    return output.trim();
  }

  /** Every file under the backend and the program's stack config files, as text. */
  stateText(programDir: string): string {
    const files = [...walk(path.join(this.home, "backend")), ...fs.readdirSync(path.resolve(this.home, programDir)).filter((f) => /^Pulumi\..+\.yaml$/.test(f)).map((f) => path.resolve(this.home, programDir, f))];
    return files.map((file) => fs.readFileSync(file, "utf8")).join("\n");
  }

  async close(): Promise<void> {
    await this.registry.close();
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

/** GOPATH (the module cache under it) and GOCACHE as `go env` has them for this user; none without Go. */
function goCaches(): Record<string, string> {
  const env = spawnSync("go", ["env", "GOPATH", "GOCACHE"], { encoding: "utf8" });
  if (env.status !== 0) return {};
  const [GOPATH, GOCACHE] = env.stdout.trim().split("\n");
  return { GOPATH, GOCACHE };
}

function* walk(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
