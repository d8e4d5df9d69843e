// `npm run build`: compiles to dist/ incrementally (tsc keeps what it knows in dist/.tsbuildinfo), so a build
// right after another (npm ci's prepare, then npm test's pretest) takes a second, not a dozen. Outputs whose
// source is gone are removed, as a build into an empty folder would leave none.
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const dist = path.join(root, "dist");
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc", { paths: [root] }), "-p", "tsconfig.json", "--incremental", "--tsBuildInfoFile", path.join(dist, ".tsbuildinfo")], { cwd: root, stdio: "inherit" });

const OUTPUT = /(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;
for (const file of walk(dist)) {
  const source = path.join(root, path.relative(dist, file)).replace(OUTPUT, ".ts");
  if (OUTPUT.test(file) && !fs.existsSync(source)) fs.rmSync(file);
}

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
