import * as fs from "node:fs";
import * as path from "node:path";

// Every relative link of README.md and of the pages under docs/ resolves: the file (or folder) exists, and an
// `#anchor` names a heading of the page it points into, as GitHub renders the page. The README starts short and
// sends readers to docs/, so a page renamed or a heading reworded must not leave a dead link behind.
const ROOT = path.resolve(__dirname, "..", "..");
const pages = ["README.md", ...fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => path.join("docs", f))];

/** The text outside fenced code blocks and inline code spans (links there are code, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const [, heading] of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

/** The relative link targets of a page: `[text](target)` and `[text]: target`, web and mail links left out. */
function linksOf(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...references].filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `page`, or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [file, anchor] = target.split("#", 2) as [string, string | undefined];
  const resolved = file ? path.resolve(ROOT, path.dirname(page), decodeURIComponent(file)) : path.join(ROOT, page);
  if (!resolved.startsWith(ROOT + path.sep)) return `${page}: ${target} points outside the repository`;
  if (!fs.existsSync(resolved)) return `${page}: ${target}: no such file`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith(".md")) return `${page}: ${target}: an anchor into a file that is not markdown`;
  if (!anchorsOf(fs.readFileSync(resolved, "utf8")).has(anchor)) return `${page}: ${target}: no heading with that anchor`;
  return undefined;
}

describe("documentation links", () => {
  it("reads the README, short (at most 200 lines), and the docs pages it links to", () => {
    expect(fs.readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(200);
    expect(pages).toEqual(expect.arrayContaining(["README.md", path.join("docs", "resources.md"), path.join("docs", "emulator.md")]));
    const readmeLinks = linksOf(fs.readFileSync(path.join(ROOT, "README.md"), "utf8"));
    expect(readmeLinks).toEqual(expect.arrayContaining(["docs/resources.md", "docs/emulator.md", "docs/control-api.md"]));
  });

  it("keeps the README's Quickstart at two commands, and says what an installed pulumi saves and what the fallback needs", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const quickstart = readme.slice(readme.indexOf("## Quickstart"), readme.indexOf("\n## ", readme.indexOf("## Quickstart") + 1));
    const commands = /```sh\n([\s\S]*?)```/.exec(quickstart)![1].split("\n").filter((line) => line.trim());
    expect(commands.map((line) => line.replace(/\s+#.*$/, ""))).toEqual(["npm ci && npm start", "npm ci && npm test"]);
    expect(prose(quickstart)).toMatch(/nothing is built/);
    expect(prose(quickstart)).toMatch(/on Linux, Go 1\.25 or later/);
    expect(prose(quickstart)).toMatch(/minutes once/);
  });

  it.each(pages)("every relative link in %s resolves, anchors included", (page) => {
    const markdown = fs.readFileSync(path.join(ROOT, page), "utf8");
    expect(linksOf(markdown).map((target) => brokenLink(page, target)).filter(Boolean)).toEqual([]);
  });

  it("would see a missing file and a missing anchor (the check can fail)", () => {
    expect(brokenLink("README.md", "docs/no-such-page.md")).toMatch(/no such file/);
    expect(brokenLink("README.md", "docs/resources.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenLink("docs/resources.md", "#declaring-an-instance")).toBeUndefined();
    expect(brokenLink("docs/control-api.md", "#the-control-apis-threat-model")).toBeUndefined();
    expect(linksOf("see `[a](nowhere.md)` and\n```\n[b](nowhere.md)\n```\n[c](https://example.com) [d](x.md)")).toEqual(["x.md"]);
    expect([...anchorsOf("# A fleet: `GpuFleet`\n## A data folder (`--data-dir`)\n## Same\n## Same")]).toEqual([
      "a-fleet-gpufleet",
      "a-data-folder---data-dir",
      "same",
      "same-1",
    ]);
  });
});

// The repository is whole: facts about the live service that the code relies on are cited from
// docs/service-facts.md (each fact there with its source), never from a document beside the repository. Tests may
// still read the spec and the vendor's recorded data there as outside judges (a path of `shared/spec` or
// `shared/real-service` in a test's code).
const SOURCE_DIRS = ["sdk", "emulator", "provider", "cli", "bench", "tools", "examples", "docs", "test"];
const SOURCE_FILE = /\.(ts|js|mjs|md|py|go|ya?ml)$/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(relative);
    return SOURCE_FILE.test(entry.name) ? [relative] : [];
  });
}

/** What cites a document outside the repository in `text` (of the file `file`), or a section of the facts page it lacks. */
function outsideCitations(file: string, text: string, anchors: Set<string>): string[] {
  const problems: string[] = [];
  for (const match of text.matchAll(/shared\/notes|renter-api|service-facts(?!\.md)|shared\/(?:spec|real-service)/g)) {
    const reading = file.startsWith(`test${path.sep}`) && /^shared\/(spec|real-service)/.test(match[0]);
    if (!reading) problems.push(`${file}: cites ${match[0]}`);
  }
  for (const [, anchor] of text.matchAll(/service-facts\.md#([\w-]+)/g)) {
    if (!anchors.has(anchor)) problems.push(`${file}: service-facts.md#${anchor}: no such section`);
  }
  return problems;
}

describe("the repository cites no document outside it", () => {
  const facts = fs.readFileSync(path.join(ROOT, "docs", "service-facts.md"), "utf8");
  const anchors = anchorsOf(facts);

  it("every source file cites the live service's facts from docs/service-facts.md, by a section it has", () => {
    const files = ["README.md", ...SOURCE_DIRS.flatMap(sourceFiles)].filter((file) => file !== path.join("test", "docs", "links.test.ts"));
    expect(files.length).toBeGreaterThan(300);
    expect(files.flatMap((file) => outsideCitations(file, fs.readFileSync(path.join(ROOT, file), "utf8"), anchors))).toEqual([]);
  });

  it("would see a citation of the notes, a section the page lacks, and let a test read the spec", () => {
    const code = path.join("sdk", "x.ts");
    expect(outsideCitations(code, "(service-facts)", anchors)).toEqual([`${code}: cites service-facts`]);
    expect(outsideCitations(code, "../shared/notes/renter-api.md", anchors)).toHaveLength(2);
    expect(outsideCitations(code, "docs/service-facts.md#no-such-section", anchors)).toEqual([`${code}: service-facts.md#no-such-section: no such section`]);
    expect(outsideCitations(code, "docs/service-facts.md#sources", anchors)).toEqual([]);
    expect(outsideCitations(path.join("test", "x.test.ts"), 'resolve(__dirname, "../../../shared/spec/service-api.md")', anchors)).toEqual([]);
    expect(outsideCitations(code, "shared/spec/service-api.md", anchors)).toHaveLength(1);
  });

  it("every fact has its source, and the page is linked from the docs' index and the emulator's page", () => {
    for (const section of facts.split(/^## /m).slice(2)) expect(section).toMatch(/\[(spec|vendor|vendor-2026-05|docs: [^\]]+|client: [^\]]+|recorded [^\]]+|report: [^\]]+|terraform[^\]]*)\]/);
    expect(fs.readFileSync(path.join(ROOT, "docs", "_index.md"), "utf8")).toContain("(service-facts.md)");
    expect(fs.readFileSync(path.join(ROOT, "docs", "emulator.md"), "utf8")).toContain("(service-facts.md)");
  });
});
