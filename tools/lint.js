// `npm run lint`: the type checks of the tests and of the examples, and ESLint, side by side. Each is one
// single-threaded process, and on a fresh clone (no caches yet) each takes some ten seconds or more: run one after
// another they kept a core idle. Each checker's output is printed whole when it ends; the lint fails if any fails.
const { spawn } = require("node:child_process");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const cache = path.join(root, "node_modules", ".cache", "gpu-rental-lint");
// The commands npm put in node_modules/.bin, run by this Node.
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const typeCheck = (project, name) => [bin("tsc"), "-p", project, "--noEmit", "--incremental", "--tsBuildInfoFile", path.join(cache, `${name}.tsbuildinfo`)];

const CHECKS = [
  { name: "tsc (tests)", args: typeCheck("tsconfig.test.json", "test") },
  { name: "tsc (examples)", args: typeCheck("tsconfig.examples.json", "examples") },
  { name: "eslint", args: [bin("eslint"), "--cache", "--cache-location", path.join(cache, "eslint") + path.sep, "."] },
];

function check({ name, args }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    const output = [];
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => resolve({ name, code: 1, output: `${error.message}\n` }));
    child.on("close", (code) => resolve({ name, code: code ?? 1, output: Buffer.concat(output).toString() }));
  });
}

Promise.all(CHECKS.map(check)).then((results) => {
  for (const { name, code, output } of results) {
    if (output) process.stdout.write(output);
    if (code !== 0) console.error(`lint: ${name} failed (exit ${code})`);
  }
  process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;
});
