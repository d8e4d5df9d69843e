import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./provider-host";

const run = promisify(execFile);

/** The package as `npm pack` made it for this test run (test/helpers/global-setup.js). */
export function tarball(): string {
  const file = process.env.GPU_RENTAL_TARBALL;
  if (!file || !fs.existsSync(file)) throw new Error("GPU_RENTAL_TARBALL is not set: run the tests through jest's global setup (npm test)");
  return file;
}

/**
 * A user's program in a folder of its own outside the repository, with the packed package installed by npm
 * the way a user installs it. Nothing of the repository is visible from there.
 */
export class UserProgram {
  private constructor(readonly dir: string) {}

  /** A new program from `files`, with `packages` installed (`gpu-rental` stands for the packed tarball). */
  static async create(name: string, files: Record<string, string>, packages: string[]): Promise<UserProgram> {
    const program = new UserProgram(fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`)));
    program.write({ "package.json": JSON.stringify({ name, version: "1.0.0", private: true }, null, 2), ...files });
    await program.npm("install", ...packages.map((p) => (p === "gpu-rental" ? tarball() : p)));
    return program;
  }

  /** A copy of `examples/<name>`, installed as its README says, with the packed package for `gpu-rental`. */
  static async fromExample(name: string): Promise<UserProgram> {
    const program = new UserProgram(fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-example-${name}-`)));
    fs.cpSync(path.join(REPO_ROOT, "examples", name), program.dir, { recursive: true });
    await program.npm("install", tarball());
    return program;
  }

  write(files: Record<string, string>): void {
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
      fs.writeFileSync(path.join(this.dir, file), text);
    }
  }

  /** Runs npm in the program's folder, offline where the cache allows. */
  async npm(...args: string[]): Promise<string> {
    return this.npmWith({}, ...args);
  }

  async npmWith(env: Record<string, string>, ...args: string[]): Promise<string> {
    const { stdout } = await run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
      cwd: this.dir,
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** Every copy of @pulumi/pulumi installed in the program's tree (a program must hold exactly one). */
  pulumiCopies(): string[] {
    const copies: string[] = [];
    const visit = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const full = path.join(dir, entry.name);
        if (full.endsWith(path.join("@pulumi", "pulumi")) && fs.existsSync(path.join(full, "package.json"))) copies.push(full);
        visit(full);
      }
    };
    visit(path.join(this.dir, "node_modules"));
    return copies;
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
