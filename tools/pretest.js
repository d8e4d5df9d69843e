// `npm test`'s pretest: the build, then the toolchain with every language's host (built from Pulumi's published
// modules where no pulumi is installed: minutes, once), and the lint beside them: the lint reads the sources, not
// the build, and on a fresh clone each side is mostly one core's work (docs/testing.md). The build's and the
// toolchain's progress is shown as it comes; the lint's report when it ends. jest runs only if all passed.
const { spawn } = require("node:child_process");
const path = require("node:path");

const root = path.resolve(__dirname, "..");

function run(args, { env = process.env, quiet = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", quiet ? "pipe" : "inherit", quiet ? "pipe" : "inherit"] });
    const output = [];
    child.stdout?.on("data", (chunk) => output.push(chunk));
    child.stderr?.on("data", (chunk) => output.push(chunk));
    child.on("error", (error) => resolve({ code: 1, output: `${error.message}\n` }));
    child.on("close", (code) => resolve({ code: code ?? 1, output: Buffer.concat(output).toString() }));
  });
}

async function buildThenToolchain() {
  const build = await run([path.join(root, "tools", "build.js")]);
  if (build.code !== 0) return { name: "build", ...build };
  const toolchain = await run([path.join(root, "bin", "gpu-rental.js"), "toolchain"], { env: { ...process.env, GPU_RENTAL_BUILD_PULUMI: "1" } });
  return { name: "toolchain", ...toolchain };
}

async function main() {
  const lint = run([path.join(root, "tools", "lint.js")], { quiet: true }).then((result) => ({ name: "lint", ...result }));
  const results = await Promise.all([buildThenToolchain(), lint]);
  for (const { name, code, output } of results) {
    if (output) process.stdout.write(output);
    if (code !== 0) console.error(`pretest: ${name} failed (exit ${code})`);
  }
  process.exitCode = results.some((result) => result.code !== 0) ? 1 : 0;
}

void main();
