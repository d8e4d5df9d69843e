import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { Block, blocksOf, checkOf, pages, runBlocks, TERMINAL } from "../docs/page-blocks";
import { linkCopy } from "../helpers/user-program";
import { REPO_ROOT } from "../helpers/paths";
import { DocMachine, PageScript, portIsFree } from "../languages/doc-program";
import { UserProgram } from "../helpers/user-program";

const run = promisify(execFile);

/**
 * Every page as printed, but the sections a test of their own follows (test/docs/page-blocks.ts, FOLLOWED_BY):
 * the TypeScript blocks of a page compiled together, in one tsc run, in the setting the page gives (the README's
 * project for the README and docs/, the example's own folder and tsconfig for an example's README); the `sh` blocks
 * of a page run in order, as a user in one shell does, on a machine of its own where the package is installed as
 * the README says, against the emulator the page starts (its port its own). Marked blocks (not runnable here) are
 * checked by test/docs/pages.test.ts.
 */

/** The README's project as printed (its Pulumi.yaml, tsconfig.json and index.ts), with what its install installs. */
function readmeFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const block of blocksOf("README.md").filter((b) => b.title)) files[block.title!] = block.body;
  return files;
}

/** The install of the README's "Use it in your own program" (its versions), shared by every page that needs it. */
const README_PACKAGES = ["gpu-rental", "@pulumi/pulumi@3.248.0"];
const README_DEV_PACKAGES = ["typescript@~5.9.3", "@types/node@^20.19.43"];

function readmeProgram(): Promise<UserProgram> {
  return UserProgram.create("pages", readmeFiles(), README_PACKAGES, README_DEV_PACKAGES);
}

/** The file a TypeScript block is compiled as: its page and line, in its name (what tsc's errors name). */
const snippetFile = (block: Block) => `page-${block.page.replace(/[^\w]+/g, "-")}-L${block.line}.ts`;

/** A page's TypeScript blocks to compile: its program blocks (a test of their own runs the rest). */
function tsBlocks(page: string, text?: string): Block[] {
  return blocksOf(page, text).filter((b) => ["ts", "typescript"].includes(b.lang) && checkOf(b).kind === "program");
}

/** The pages with TypeScript blocks to compile. */
const TS_PAGES = pages().filter((page) => tsBlocks(page).length);

/** The folder a page's blocks compile in, with its tsconfig: the README's project, or the example's own. */
async function settingOf(page: string): Promise<{ program: UserProgram; tsconfig: any }> {
  const example = /^examples\/([^/]+)\/README\.md$/.exec(page)?.[1];
  if (example && fs.existsSync(path.join(REPO_ROOT, "examples", example, "tsconfig.json"))) {
    const program = await UserProgram.fromExample(example);
    return { program, tsconfig: JSON.parse(fs.readFileSync(path.join(program.dir, "tsconfig.json"), "utf8")) };
  }
  const program = await readmeProgram();
  return { program, tsconfig: JSON.parse(readmeFiles()["tsconfig.json"]) };
}

/**
 * Compiles a page's TypeScript blocks together (one tsc run, the setting's own tsc), each as a module of its own (a
 * block that imports nothing is made one, so blocks never see each other's names), with the setting's own files
 * (an example's program: `npx tsc --noEmit` in its folder). The errors, by page and line.
 */
async function compilePage(page: string, text?: string): Promise<{ code: number; errors: string }> {
  const blocks = tsBlocks(page, text);
  const { program, tsconfig } = await settingOf(page);
  try {
    program.write(Object.fromEntries(blocks.map((b) => [snippetFile(b), /^\s*(import|export)\s/m.test(b.body) ? b.body : `${b.body}export {};\n`])));
    program.write({ "tsconfig.pages.json": JSON.stringify({ ...tsconfig, compilerOptions: { ...tsconfig.compilerOptions, noEmit: true }, files: [...(tsconfig.files ?? []), ...blocks.map(snippetFile)] }) });
    const tsc = path.join(program.dir, "node_modules", "typescript", "bin", "tsc");
    return await run(process.execPath, [tsc, "-p", "tsconfig.pages.json", "--pretty", "false"], { cwd: program.dir, maxBuffer: 16 << 20 }).then(
      () => ({ code: 0, errors: "" }),
      (error) => ({ code: error.code as number, errors: `${error.stdout}${error.stderr}` }),
    );
  } finally {
    program.remove();
  }
}

describe("every page's TypeScript blocks compile, in the setting the page gives", () => {
  it("finds them", () => {
    expect(TS_PAGES).toEqual(expect.arrayContaining(["docs/serverless.md", "docs/workflows.md", "docs/resources.md", "docs/reference.md", "examples/serverless/README.md"]));
  });

  it.concurrent.each(TS_PAGES)("%s", async (page) => {
    expect(await compilePage(page)).toEqual({ code: 0, errors: "" });
  }, 300_000);

  it.concurrent("a block broken on purpose fails, named by its page and line (top-level await in the CommonJS project)", async () => {
    const page = "docs/serverless.md";
    const text = fs.readFileSync(path.join(REPO_ROOT, page), "utf8");
    const broken = text.replace(/^async function main\(\) \{\n([\s\S]*?)^\}\nvoid main\(\);\n/m, (_, body: string) => body.replace(/^ {2}/gm, ""));
    expect(broken).not.toBe(text);
    const block = tsBlocks(page, broken).find((b) => /^const answer = await route/m.test(b.body))!;
    const result = await compilePage(page, broken);
    expect(result.code).not.toBe(0);
    expect(result.errors).toMatch(new RegExp(`${snippetFile(block).replace(/\./g, "\\.")}\\(\\d+,\\d+\\): error TS(1378|1309|1375)`));
  }, 300_000);
});

/**
 * What a page's commands need before its first block, as the page says it (each says so in its text): the
 * package installed as the README says, in the README's project (`gpu-infra`) or a copy of an example, with the
 * toolchain's `pulumi` on PATH (`eval "$(npx gpu-rental toolchain --env)"`), and for the pages about a team's
 * runners the backend's variables every runner has (PULUMI_BACKEND_URL: the machine's own file backend; the
 * passphrase).
 */
interface Setting {
  /** The folder the commands start in: the README's project, or a copy of an example. */
  program: "readme" | { example: string };
  /** Commands run first, in that folder (the setting as the page describes it). */
  before?: string;
}

const INSTALLED = 'eval "$(npx gpu-rental toolchain --env)"';
const RUNNER = `${INSTALLED}\nexport PULUMI_CONFIG_PASSPHRASE=choose-a-passphrase`;

/** The pages whose `sh` blocks this file runs, and their settings. */
const SETTINGS: Record<string, Setting> = {
  "docs/emulator.md": { program: "readme", before: INSTALLED },
  "docs/ssh.md": { program: "readme", before: INSTALLED },
  "docs/team.md": { program: "readme", before: RUNNER },
  // "Run in the project's folder, with the backend the stack lives in": the README's project with its stack prod.
  "docs/workflows.md": { program: "readme", before: `${RUNNER}\npulumi stack init prod` },
  // "In an example's folder after its npm install".
  "examples/README.md": { program: { example: "instance-from-image" } },
  // "In this folder, after npm install": the example's folder with its package installed.
  "examples/interruptible-job/README.md": { program: { example: "interruptible-job" } },
};

/** A page's blocks as the steps of one shell: terminals (a block run in a terminal of its own) where they are. */
function stepsOf(page: string, text?: string): PageScript {
  const steps: PageScript["steps"] = [];
  for (const block of blocksOf(page, text)) {
    const [first, ...rest] = block.body.split("\n");
    // A file the page has the reader write (`title="rent.ts"`), where it has it.
    if (block.title && checkOf(block).kind === "program") steps.push({ script: `cat > ${block.title} <<'DOCS_FILE_END'\n${block.body}DOCS_FILE_END` });
    else if (checkOf(block).kind !== "run") continue;
    else if (TERMINAL.test(first)) steps.push({ terminal: rest.join("\n").trim() });
    else steps.push({ script: block.body });
  }
  return { steps };
}

/** The ports a page's commands listen on (`--port N`): free before, free after. */
const portsOf = (page: PageScript) => [...JSON.stringify(page).matchAll(/--port (\d+)/g)].map((m) => Number(m[1]));

/** Follows a page's `sh` blocks in its setting, on a machine of its own; what they printed. */
async function followPage(page: string, text?: string): Promise<string> {
  const setting = SETTINGS[page];
  const script = stepsOf(page, text);
  for (const port of portsOf(script)) expect({ port, free: await portIsFree(port) }).toEqual({ port, free: true });
  const machine = await DocMachine.start(`page-${path.basename(page, ".md")}`);
  const program = setting.program === "readme" ? await readmeProgram() : await UserProgram.fromExample(setting.program.example);
  try {
    const folder = setting.program === "readme" ? "gpu-infra" : setting.program.example;
    await linkCopy(program.dir, path.join(machine.home, folder));
    const terminals = script.steps.filter((s) => "terminal" in s).length;
    return await machine.followPage(
      { steps: [{ script: `cd ${folder}\n${setting.before ?? ""}` }, ...script.steps] },
      Array.from({ length: terminals }, () => /Control API/),
    );
  } finally {
    program.remove();
    // The terminals stopped as a user stops them (Ctrl-C), the page's emulators with them: their ports free again.
    await machine.close();
    for (const port of portsOf(script)) expect({ port, free: await portIsFree(port) }).toEqual({ port, free: true });
  }
}

describe("every page's commands run as printed", () => {
  it("runs every page with commands of its own, and only those", () => {
    const run = pages().filter((page) => runBlocks(page).length);
    expect(run.sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  /** What each page's commands show when they did what the page says. */
  const SHOWN: Record<string, RegExp[]> = {
    "docs/emulator.md": [],
    "docs/ssh.md": [],
    // The workflow library's snippet rents 9 instances and destroys them all.
    "docs/workflows.md": [/^left running: 0$/m, /^TOTAL\s+0 live/m],
    // A stack per pull request: made, deployed, its outputs read, destroyed and removed.
    "docs/team.md": [/Created stack 'pr-7'/, /\+ 2 created/, /- 2 deleted/, /Stack 'pr-7' has been removed/],
    "examples/README.md": [/\+ \d+ created/, /- \d+ deleted/],
    // The six emulated hours, outbids and restarts included, to the job's end.
    "examples/interruptible-job/README.md": [/^job train-demo \(.*\): succeeded$/m],
  };

  it.concurrent.each(Object.keys(SETTINGS))("%s", async (page) => {
    const output = await followPage(page);
    expect(output).not.toMatch(/command not found/);
    for (const shown of SHOWN[page]) expect({ page, shown: shown.test(output) ? shown : output }).toEqual({ page, shown });
  }, 600_000);

  it.concurrent("a command broken on purpose fails (gpu-rental without npx, in an npm project)", async () => {
    const page = "docs/emulator.md";
    const text = fs.readFileSync(path.join(REPO_ROOT, page), "utf8").replace(/^npx gpu-rental emulator/m, "gpu-rental emulator");
    await expect(followPage(page, text)).rejects.toThrow(/gpu-rental: command not found/);
  }, 600_000);
});
