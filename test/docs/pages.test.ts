import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { allBlocks, Block, blocksOf, checkOf, FOLLOWED_BY, pages } from "./page-blocks";

/**
 * Every code block of every page is checked by the suite: each `sh` block is run (test/package/pages.test.ts, or
 * the test that follows its section, or examples.test.ts for an example's `gpu-rental test` line), or marked in
 * the page as not runnable here and checked here as far as it can be (its shell parses, the scripts and options it
 * names exist); each program block compiles (TypeScript: test/package/pages.test.ts) or parses (YAML, JSON,
 * Python, Go) here.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const BLOCKS = allBlocks();
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");
const where = (block: Block) => `${block.page}:${block.line}`;

it("reads every page and its blocks", () => {
  expect(pages()).toEqual(expect.arrayContaining(["README.md", "docs/team.md", "docs/workflows.md", "examples/README.md", "examples/serverless/README.md"]));
  expect(BLOCKS.length).toBeGreaterThan(150);
  // A marker names how the block is checked: one the machinery does not know is a mistake in the page.
  for (const block of BLOCKS.filter((b) => b.marker)) expect({ at: where(block), marker: block.marker }).toEqual({ at: where(block), marker: expect.stringMatching(/^(not run: \S|same as \S)/) });
});

describe("the sections a test of their own follows", () => {
  it.each(FOLLOWED_BY.map((f) => [f.test, f] as const))("%s follows what it is said to", (_, { page, sections, test }) => {
    const source = read(test);
    // pageScript("docs/go.md", [...]) or scriptOf("go.md", [...]): the page, then each section, as strings.
    const name = page.startsWith("docs/") ? `(?:"${page}"|"${path.basename(page)}")` : `"${page}"`;
    for (const section of sections) expect({ test, section, followed: new RegExp(`(pageScript|scriptOf)\\(${name}, \\[[^\\]]*"${section.replace(/[()]/g, "\\$&")}"`).test(source) }).toEqual({ test, section, followed: true });
  });
});

describe("blocks not run here, checked as far as they can be", () => {
  const notRun = BLOCKS.filter((b) => b.lang === "sh" && checkOf(b).kind === "not-run");

  it("are few, and each says why", () => {
    expect(notRun.length).toBeGreaterThan(10);
    for (const block of notRun) expect({ at: where(block), why: (checkOf(block) as { why: string }).why.length > 10 }).toEqual({ at: where(block), why: true });
  });

  it.each(notRun.map((b) => [where(b), b] as const))("%s parses as shell, and the scripts it runs exist", (_, block) => {
    // A placeholder (`<your API key>`) stands for a word the reader puts there.
    const parsed = spawnSync("bash", ["-n"], { input: block.body.replace(/<[^>\n]+>/g, "WORD"), encoding: "utf8" });
    expect({ code: parsed.status, stderr: parsed.stderr }).toEqual({ code: 0, stderr: "" });
    const scripts = JSON.parse(read("package.json")).scripts;
    for (const [, script] of block.body.matchAll(/npm (?:run )?(\w[\w:-]*)/g)) {
      if (["ci", "install", "pack", "init"].includes(script)) continue;
      expect({ script, exists: script in scripts }).toEqual({ script, exists: true });
    }
  });

  it("every example's deploy against the real service says what it needs: pulumi on PATH and the passphrase", () => {
    const deploys = BLOCKS.filter((b) => /^examples\/[^/]+\/README\.md$/.test(b.page) && b.section === "Deploy it for real" && b.lang === "sh");
    expect(deploys.length).toBeGreaterThanOrEqual(13);
    for (const block of deploys) {
      const body = block.body;
      expect({ at: where(block), pulumi: /gpu-rental toolchain --env|Pulumi CLI on PATH/.test(body), passphrase: /PULUMI_CONFIG_PASSPHRASE|PULUMI_ACCESS_TOKEN/.test(body) }).toEqual({ at: where(block), pulumi: true, passphrase: true });
    }
  });

  it("docs/testing.md's synopsis names the options `gpu-rental test --help` lists, and no other", () => {
    const block = blocksOf("docs/testing.md").find((b) => b.body.startsWith("npx gpu-rental test ["))!;
    const help = execFileSync(process.execPath, [path.join(ROOT, "bin", "gpu-rental.js"), "test", "--help"], { encoding: "utf8" });
    const named = [...new Set([...block.body.matchAll(/--[\w-]+/g)].map((m) => m[0]))];
    expect(named.length).toBeGreaterThan(8);
    for (const option of named) expect({ option, listed: new RegExp(`^\\s+${option} `, "m").test(help) }).toEqual({ option, listed: true });
  });
});

describe("blocks that are another page's", () => {
  it.each(BLOCKS.filter((b) => checkOf(b).kind === "same-as").map((b) => [where(b), b] as const))("%s runs only commands the page it names runs", (_, block) => {
    const { page } = checkOf(block) as { page: string };
    const theirs = new Set(blocksOf(page).filter((b) => b.lang === "sh").flatMap((b) => commandsOf(b.body)));
    expect(commandsOf(block.body).length).toBeGreaterThan(0);
    for (const command of commandsOf(block.body)) expect({ command, there: theirs.has(command) }).toEqual({ command, there: true });
  });

  it("every example's try block is `npm install` and the `gpu-rental test` line examples.test.ts runs", () => {
    const lines = BLOCKS.filter((b) => checkOf(b).kind === "example-line" && !b.page.startsWith("examples/python/"));
    expect(lines.length).toBeGreaterThanOrEqual(12);
    for (const block of lines) {
      const commands = block.body.trim().split("\n");
      expect({ at: where(block), commands: commands.map((c) => (c.startsWith("npx gpu-rental test ") ? "npx gpu-rental test" : c)) }).toEqual({ at: where(block), commands: ["npm install", "npx gpu-rental test"] });
    }
  });
});

describe("program blocks parse", () => {
  const programs = (langs: string[]) => BLOCKS.filter((b) => langs.includes(b.lang) && ["program", "not-run"].includes(checkOf(b).kind));

  it("YAML (a GitHub Actions fragment too)", () => {
    const yaml = programs(["yaml"]);
    expect(yaml.length).toBeGreaterThan(10);
    for (const block of yaml) expect({ at: where(block), errors: YAML.parseDocument(block.body).errors.map(String) }).toEqual({ at: where(block), errors: [] });
  });

  it("JSON", () => {
    for (const block of programs(["json"])) expect(() => JSON.parse(block.body)).not.toThrow();
  });

  it("Python, all blocks in one interpreter", () => {
    const python = programs(["python"]);
    expect(python.length).toBeGreaterThan(10);
    expect(pythonErrors(python)).toEqual([]);
  });

  it("Go, each block by gofmt (a fragment of statements too)", () => {
    const go = programs(["go"]);
    expect(go.length).toBeGreaterThan(10);
    for (const block of go) {
      const parsed = spawnSync("gofmt", ["-e"], { input: block.body, encoding: "utf8" });
      expect({ at: where(block), code: parsed.status, stderr: parsed.stderr }).toEqual({ at: where(block), code: 0, stderr: "" });
    }
  });

  it("a block broken on purpose fails its check", () => {
    const [python] = programs(["python"]);
    expect(pythonErrors([{ ...python, body: python.body.replace(/\)\s*$/, "") }])).toHaveLength(1);
    expect(YAML.parseDocument("jobs:\n  deploy:\n    concurrency: [a\n").errors).not.toHaveLength(0);
    expect(spawnSync("gofmt", ["-e"], { input: "x := f(\n", encoding: "utf8" }).status).not.toBe(0);
  });
});

/** A shell block's commands: its lines without comments, blank lines or trailing spaces. */
function commandsOf(body: string): string[] {
  return body.split("\n").map((line) => line.replace(/(^|\s+)#(?![^"]*"\s*$).*$/, "").trimEnd()).filter(Boolean);
}

/** The blocks Python cannot parse, `page:line: error`. */
function pythonErrors(blocks: Block[]): string[] {
  const script = "import ast, json, sys\nfor at, body in json.load(sys.stdin):\n  try: ast.parse(body)\n  except SyntaxError as e: print(f'{at}: {e}')\n";
  const out = execFileSync("python3", ["-c", script], { input: JSON.stringify(blocks.map((b) => [where(b), b.body])), encoding: "utf8" });
  return out.split("\n").filter(Boolean);
}
