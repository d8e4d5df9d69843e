// `npm run build`: compiles to dist/ incrementally (tsc keeps what it knows in dist/.tsbuildinfo), so a build
// right after another takes a second, not a dozen; a fresh clone starts from the dist/ another clone of the machine
// kept (clone-cache.js). Outputs whose source is gone are removed, as a build into an empty folder would leave none.
// Then ssh2 is bundled into the package (release/bundle.ts says why), again only when it or its bundler
// changed.
const { execFileSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");
const { seed, keep } = require("./clone-cache");

const root = path.resolve(__dirname, "..");
const dist = path.join(root, "dist");
seed("dist", dist, root);
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc", { paths: [root] }), "-p", "tsconfig.json", "--incremental", "--tsBuildInfoFile", path.join(dist, ".tsbuildinfo")], { cwd: root, stdio: "inherit" });

/** Where sdk/ssh2.ts finds the bundle. */
const SSH2_BUNDLE = path.join(dist, "sdk", "ssh2-bundle.js");
const OUTPUT = /(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;
for (const file of walk(dist)) {
  const source = path.join(root, path.relative(dist, file)).replace(OUTPUT, ".ts");
  if (OUTPUT.test(file) && !fs.existsSync(source) && file !== SSH2_BUNDLE) fs.rmSync(file);
}

// The bundle's stamp: the bundler's and ssh2's manifest's contents, which decide what the bundle holds.
const bundler = path.join(dist, "release", "bundle.js");
const ssh2Manifest = require.resolve("ssh2/package.json", { paths: [root] });
const stampFile = `${SSH2_BUNDLE}.stamp`;
const stamp = crypto.createHash("sha256").update(fs.readFileSync(bundler)).update(fs.readFileSync(ssh2Manifest)).digest("hex");
async function bundle() {
  if (fs.existsSync(SSH2_BUNDLE) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) return;
  await require(bundler).bundleSsh2(SSH2_BUNDLE);
  fs.writeFileSync(stampFile, stamp);
}
bundle().then(
  () => keep("dist", dist, root),
  (error) => {
    console.error(`the build could not bundle ssh2: ${error.message}`);
    process.exitCode = 1;
  },
);

function* walk(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
