import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ensureToolchain } from "../../cli/toolchain";
import { LocalRegistry } from "../helpers/local-registry";
import { REPO_ROOT } from "../helpers/provider-host";
import { tarball } from "../helpers/user-program";

const README = fs.readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

/**
 * The README's "Use it in your own program" section as one shell script: its `sh` blocks as they are, its
 * `title="file"` blocks written to those files, in order. Blocks marked as not run by the tests (the real
 * service) are left out.
 */
function scriptOfSection(title: string): string {
  const start = README.indexOf(`## ${title}\n`);
  const section = README.slice(start, README.indexOf("\n## ", start + 1));
  const blocks = [...section.matchAll(/```(\w+)(?: title="([^"]+)")?\n([\s\S]*?)```/g)];
  return blocks
    .map(([, lang, file, body]) => {
      if (file) return `cat > ${file} <<'README_FILE_END'\n${body}README_FILE_END`;
      if (lang === "sh" && !/not run by the tests/.test(body.split("\n")[0])) return body;
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

it("the README's \"Use it in your own program\" works, followed literally, from npm install to destroy", async () => {
  const script = scriptOfSection("Use it in your own program");
  expect(script).toMatch(/npm install gpu-rental/);
  expect(script).toMatch(/npx gpu-rental test/);
  const registry = await LocalRegistry.start(tarball());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-readme-"));
  const env = {
    ...process.env,
    // A user's machine: pulumi installed and logged in to a backend (a folder of the test's own), and the package
    // on the registry (served locally until it is published; npm's cache stays the real one).
    HOME: dir,
    npm_config_cache: path.join(os.homedir(), ".npm"),
    npm_config_registry: registry.url,
    PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}`,
    PULUMI_HOME: path.join(dir, ".pulumi"),
    PULUMI_BACKEND_URL: `file://${path.join(dir, "backend")}`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
  fs.mkdirSync(path.join(dir, "backend"));
  const child = spawn("bash", ["-e", "-c", script], { cwd: dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  try {
    // "exit", not "close": an emulator left running would hold the output pipes open.
    const code = await new Promise<number>((resolve) => child.on("exit", (c) => resolve(c ?? 1)));
    if (code !== 0) throw new Error(`the README's commands exited ${code}:\n${output}`);
    expect(output).toMatch(/\+ 2 created/);
    expect(output).toMatch(/~ 1 updated/);
    expect(output).toMatch(/- 2 deleted/);
    expect(output).toMatch(/gpu-rental test: (\d+) of \1 steps passed/);
    expect(fs.readFileSync(path.join(dir, "gpu-infra", "gpu-rental-test.xml"), "utf8")).toMatch(/failures="0"/);
    // `kill %1` stopped the emulator: nothing listens on its port any more.
    await expect(fetch("http://127.0.0.1:8765/api/v0/bundles/", { method: "POST" })).rejects.toThrow();
    const state = fs.readdirSync(path.join(dir, "backend"), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".json"))
      .map((e) => fs.readFileSync(path.join(e.parentPath ?? (e as any).path, e.name), "utf8"))
      .join("\n");
    expect(state).toMatch(/ciphertext|secure/);
    expect(state).not.toContain("local-dev-key-1");
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM"); // the emulator the README started in the background, if still up
    } catch {
      // already gone
    }
    await registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 600_000);
