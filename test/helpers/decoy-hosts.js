// A machine with Pulumi installed has `pulumi`, Pulumi's language hosts and its dynamic-provider plugin on PATH. The
// suite tests gpu-rental's own, so it runs with decoys of those five ahead of everything else on PATH (global-setup.js) and builds its
// toolchain whatever is on PATH (GPU_RENTAL_BUILD_PULUMI=1): a decoy that runs fails loudly, notes that it ran, and
// the summary counts that as a failed test (summary-reporter.js), whatever the test that ran it expected.
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const DECOYS = ["pulumi", "pulumi-language-nodejs", "pulumi-language-python", "pulumi-language-go", "pulumi-resource-pulumi-nodejs"];
const LOG = "ran.log";

/** Makes the decoys in a new folder and puts it first on this process's PATH (inherited by the workers). */
function plantDecoys() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-decoys-"));
  for (const name of DECOYS) {
    const script = `#!/bin/sh
echo "$(basename "$0") $*  (cwd $(pwd))" >> "${path.join(dir, LOG)}"
echo "DECOY $(basename "$0"): the test suite ran a Pulumi program that is not gpu-rental's (it stands where an installed Pulumi would, ahead on PATH)" >&2
exit 97
`;
    fs.writeFileSync(path.join(dir, name), script, { mode: 0o755 });
  }
  process.env.PATH = [dir, process.env.PATH].join(path.delimiter);
  process.env.GPU_RENTAL_DECOYS = dir;
  process.env.GPU_RENTAL_BUILD_PULUMI = "1";
  return dir;
}

/** What the decoys of this run were asked to do (each a line), none if they never ran. */
function decoysThatRan() {
  const dir = process.env.GPU_RENTAL_DECOYS;
  if (!dir || !fs.existsSync(path.join(dir, LOG))) return [];
  return fs.readFileSync(path.join(dir, LOG), "utf8").split("\n").filter(Boolean);
}

function removeDecoys() {
  if (process.env.GPU_RENTAL_DECOYS) fs.rmSync(process.env.GPU_RENTAL_DECOYS, { recursive: true, force: true });
}

module.exports = { DECOYS, plantDecoys, decoysThatRan, removeDecoys };
