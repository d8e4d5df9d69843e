import * as fs from "node:fs";
import * as path from "node:path";

// Every example's "Deploy it for real" (against the service, so not run by the tests) sets each stack config key
// its program requires: `require`/`requireSecret` in TypeScript, `require`/`require_secret` in Python,
// `Require`/`RequireSecret` in Go, and the key of each `Account` that names none (`gpu-rental:<name>ApiKey`).
const ROOT = path.resolve(__dirname, "..", "..");
const EXAMPLES = fs.readdirSync(path.join(ROOT, "examples")).filter((name) => fs.existsSync(path.join(ROOT, "examples", name, "Pulumi.yaml")));

/** The config keys a program's source requires. */
function requiredKeys(source: string): string[] {
  const required = [...source.matchAll(/\b(?:require|requireSecret|require_secret|Require|RequireSecret)\(\s*"([\w:-]+)"\s*\)/g)].map((m) => m[1]);
  const accounts = [...source.matchAll(/new Account\(\s*"(\w+)"\s*\)/g)].map((m) => `gpu-rental:${m[1]}ApiKey`);
  return [...required, ...accounts];
}

/** The keys a README's "Deploy it for real" section sets with `pulumi config set`. */
function keysSet(readme: string): string[] {
  const start = readme.indexOf("## Deploy it for real");
  if (start < 0) return [];
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1) >>> 0 || undefined);
  return [...section.matchAll(/pulumi config set (?:--secret |--path )?'?([\w:-]+)/g)].map((m) => m[1]);
}

describe("every example's README deploys it for real with every setting its program requires", () => {
  it.each(EXAMPLES)("examples/%s", (example) => {
    const dir = path.join(ROOT, "examples", example);
    const sources = fs.readdirSync(dir).filter((f) => /\.(ts|py|go)$/.test(f)).map((f) => fs.readFileSync(path.join(dir, f), "utf8"));
    const set = keysSet(fs.readFileSync(path.join(dir, "README.md"), "utf8"));
    const project = /^name: (\S+)/m.exec(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8"))![1];
    for (const key of sources.flatMap(requiredKeys)) expect({ example, key, set: set.includes(key) || set.includes(`${project}:${key}`) }).toEqual({ example, key, set: true });
  });

  it("sees what a program requires and what a README sets (the check can fail)", () => {
    expect(requiredKeys('config.requireSecret("sshPrivateKey"); cfg.RequireSecret("teamApiKey"); new Account("team");')).toEqual([
      "sshPrivateKey",
      "teamApiKey",
      "gpu-rental:teamApiKey",
    ]);
    expect(keysSet("## Deploy it for real\n\n```sh\npulumi config set --secret a:b <key>\n```\n## Next\npulumi config set c d")).toEqual(["a:b"]);
  });
});
