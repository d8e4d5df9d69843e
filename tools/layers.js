// The lint's check of the layers and circles that .dependency-cruiser.cjs rules (dependency-cruiser reads every
// import of the product's folders, type imports too). `node tools/layers.js [folder]` checks the tree of `folder`
// (the repository's by default) against the repository's rule file: its report, and exit 1 on a violation.
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
/** The folders whose imports the rules are about; what they import is followed from them. */
const PRODUCT = ["sdk", "provider", "emulator", "cli"];

/** The report of the rules' violations in the tree at `tree` ("" for none). */
async function layerViolations(tree = root) {
  // An ES module only, which a CommonJS file imports so.
  const { cruise } = await import("dependency-cruiser");
  const { forbidden, options } = require(path.join(root, ".dependency-cruiser.cjs"));
  const folders = PRODUCT.filter((folder) => fs.existsSync(path.join(tree, folder)));
  const { output, exitCode } = await cruise(folders, { ...options, baseDir: tree, validate: true, ruleSet: { forbidden }, outputType: "err" });
  return exitCode === 0 ? "" : output;
}

module.exports = { layerViolations };

if (require.main === module) {
  layerViolations(path.resolve(process.argv[2] ?? root)).then(
    (report) => {
      process.stdout.write(report);
      process.exitCode = report ? 1 : 0;
    },
    (error) => {
      console.error(`layers: ${error.stack ?? error}`);
      process.exitCode = 1;
    },
  );
}
