import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Every code block of the pages a user follows (README.md, docs/*.md, examples/*\/README.md), and how the suite
 * checks it: run (an `sh` block), compiled or parsed (a program block), or marked in the page's source as not
 * runnable here (an HTML comment right before the block: `<!-- pages: not run: <why> -->`), then checked as far as
 * it can be. The pages' own tests (test/docs/pages.test.ts, test/package/pages.test.ts) read this, nothing else.
 */
const ROOT = path.resolve(__dirname, "..", "..");

export interface Block {
  /** The page's path in the repository (`docs/team.md`). */
  page: string;
  /** The `## ` heading the block is under ("" before the first). */
  section: string;
  /** The fence's language (`sh`, `ts`, `python`, ...; "" for none). */
  lang: string;
  /** A `title="file"` block's file name. */
  title?: string;
  body: string;
  /** The line of the fence, from 1. */
  line: number;
  /** The page's marker right before the block: `<!-- pages: <marker> -->`. */
  marker?: string;
}

/** The pages: the README, every docs page and every example's README. */
export function pages(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  const examples = fs.readdirSync(path.join(ROOT, "examples")).filter((d) => fs.existsSync(path.join(ROOT, "examples", d, "README.md")));
  return ["README.md", ...docs.sort(), "examples/README.md", ...examples.sort().map((d) => `examples/${d}/README.md`)].filter((p, i, all) => all.indexOf(p) === i);
}

const MARKER = /<!--\s*pages:\s*([\s\S]*?)\s*-->\s*$/;

/** A page's code blocks, in order (`text`: the page's text, for a page changed on purpose). */
export function blocksOf(page: string, text = fs.readFileSync(path.join(ROOT, page), "utf8")): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  let section = "";
  for (let i = 0; i < lines.length; i++) {
    const heading = /^## (.*)$/.exec(lines[i]);
    if (heading) section = heading[1];
    const fence = /^(\s*)```(\w*)(?: title="([^"]+)")?\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1].length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== "```"; i++) body.push(lines[i].slice(indent));
    // The marker: the last non-blank line before the fence.
    let before = start - 1;
    while (before >= 0 && !lines[before].trim()) before--;
    const marker = before >= 0 ? MARKER.exec(lines[before])?.[1] : undefined;
    blocks.push({ page, section, lang: fence[2], title: fence[3], body: `${body.join("\n")}\n`, line: start + 1, marker });
  }
  return blocks;
}

/** Every block of every page. */
export function allBlocks(): Block[] {
  return pages().flatMap((page) => blocksOf(page));
}

/** The first line of a block that a terminal of its own runs (a long-running command such as the emulator). */
export const TERMINAL = /^# in a terminal of its own/;
/** The first line of a block of the real service (its URL, a key of it): not run by the tests. */
export const REAL_SERVICE = /not run by the tests/;

/**
 * The sections that a test of their own follows literally, as a user would (their pages' other blocks are
 * followed by test/package/pages.test.ts): each named test calls `pageScript(page, [..., section, ...])` or
 * `scriptOf(...)` with them, which test/docs/pages.test.ts checks.
 */
export const FOLLOWED_BY: { page: string; sections: string[]; test: string }[] = [
  { page: "README.md", sections: ["Use it in your own program"], test: "test/package/readme.test.ts" },
  { page: "docs/installation-configuration.md", sections: ["Installation"], test: "test/plugin/release.test.ts" },
  { page: "docs/spend-guard.md", sections: ["Try it against the emulator"], test: "test/docs/spend-guard.test.ts" },
  { page: "docs/go.md", sections: ["Set up", "Deploy", "Adopt what was made elsewhere", "Test it as CI does"], test: "test/languages/go.test.ts" },
  { page: "docs/yaml.md", sections: ["Set up", "Deploy", "Adopt what was made elsewhere", "Test it as CI does"], test: "test/languages/yaml.test.ts" },
  {
    page: "docs/python.md",
    sections: ["The project", "Install with pip (no Node.js)", "Deploy", "Test it as CI does", "Adopt what was made elsewhere", "What it costs, and what is left behind"],
    test: "test/languages/python.test.ts",
  },
  { page: "docs/python.md", sections: ["Install from the npm package"], test: "test/languages/python-npm.test.ts" },
];

/** The test that follows a block's section, if one of their own does. */
export function followedBy(block: Block): string | undefined {
  return FOLLOWED_BY.find((f) => f.page === block.page && f.sections.includes(block.section))?.test;
}

/** How the suite checks a block. */
export type Check =
  /** An `sh` block run by test/package/pages.test.ts, in its page's order, against its page's emulator. */
  | { kind: "run" }
  /** Run by the test that follows its section. */
  | { kind: "followed"; test: string }
  /** The example's `gpu-rental test` line, which test/package/examples.test.ts runs in a copy of the example. */
  | { kind: "example-line" }
  /** Not runnable here (the page's marker says why): checked as far as it can be. */
  | { kind: "not-run"; why: string }
  /** The same commands as another page's block, which is run there (`<!-- pages: same as <page> -->`). */
  | { kind: "same-as"; page: string }
  /** A program block (or a file the page writes): compiled or parsed by its language. */
  | { kind: "program" }
  /** What a command prints (`text`, an untyped block): nothing to run. */
  | { kind: "output" };

/** The languages of program blocks. */
export const PROGRAM_LANGS = ["ts", "typescript", "js", "python", "go", "yaml", "json"];

export function checkOf(block: Block): Check {
  const followed = followedBy(block);
  const marker = block.marker;
  if (marker?.startsWith("not run:")) return { kind: "not-run", why: marker.slice("not run:".length).trim() };
  if (marker?.startsWith("same as ")) return { kind: "same-as", page: marker.slice("same as ".length).trim() };
  if (block.lang === "sh" && REAL_SERVICE.test(block.body.split("\n")[0])) return { kind: "not-run", why: "the real service" };
  if (followed && (block.lang === "sh" || block.title)) return { kind: "followed", test: followed };
  if (block.lang === "sh" && /^examples\/[^/]+\/README\.md$/.test(block.page) && block.section === "Try it against the emulator (nothing is rented)")
    return { kind: "example-line" };
  if (block.lang === "sh") return { kind: "run" };
  if (PROGRAM_LANGS.includes(block.lang)) return { kind: "program" };
  return { kind: "output" };
}

/** A page's `sh` blocks that test/package/pages.test.ts runs, in order. */
export function runBlocks(page: string, text?: string): Block[] {
  return blocksOf(page, text).filter((block) => checkOf(block).kind === "run");
}
