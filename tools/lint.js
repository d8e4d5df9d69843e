// `npm run lint`: the type checks of the tests and of the examples (tsconfig.test.json, tsconfig.examples.json),
// then ESLint with its type-aware rules reading the very programs the checks built, then the layers and circles
// of .dependency-cruiser.cjs (./layers.js). Left to itself, ESLint builds and checks both projects again: on a
// fresh clone (no caches yet) that was about half of the lint's CPU.
// The checks keep what they know between runs (tsc's incremental build info), as ESLint keeps its results (by
// the files' contents), and a fresh clone starts from what another clone of the machine kept (clone-cache.js).
const path = require("node:path");
const ts = require("typescript");
const { ESLint } = require("eslint");
const { seed, keep } = require("./clone-cache");
const { layerViolations } = require("./layers");

const root = path.resolve(__dirname, "..");
const cache = path.join(root, "node_modules", ".cache", "gpu-rental-lint");
const PROJECTS = [
  { config: "tsconfig.test.json", buildInfo: "test.tsbuildinfo" },
  { config: "tsconfig.examples.json", buildInfo: "examples.tsbuildinfo" },
];

/** A project's program, type-checked: its errors, as tsc prints them, and the program for ESLint. */
function checked({ config, buildInfo }) {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, config), { incremental: true, tsBuildInfoFile: path.join(cache, buildInfo) }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  });
  const builder = ts.createIncrementalProgram({ rootNames: parsed.fileNames, options: parsed.options, projectReferences: parsed.projectReferences });
  const diagnostics = [...parsed.errors, ...builder.getSyntacticDiagnostics(), ...builder.getSemanticDiagnostics()];
  // With noEmit, the build info only; after the checks, so that it keeps their results for the next run.
  diagnostics.push(...builder.emit().diagnostics);
  return { diagnostics, program: builder.getProgram() };
}

async function main() {
  seed("lint", cache, root);
  const projects = PROJECTS.map(checked);
  const diagnostics = ts.sortAndDeduplicateDiagnostics(projects.flatMap((project) => project.diagnostics));
  if (diagnostics.length) {
    process.stdout.write(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (file) => file, getCurrentDirectory: () => root, getNewLine: () => "\n" }));
  }
  // ESLint's cache keys its results by the configuration as JSON: the programs stand there as their projects' names,
  // and the folder that would find their tsconfigs (which differs from clone to clone) is not there.
  const programs = Object.assign(projects.map((project) => project.program), { toJSON: () => PROJECTS.map((project) => project.config) });
  const eslint = new ESLint({
    cwd: root,
    cache: true,
    cacheLocation: path.join(cache, "eslint.json"),
    cacheStrategy: "content",
    overrideConfig: { files: ["**/*.ts"], languageOptions: { parserOptions: { project: null, tsconfigRootDir: null, programs } } },
  });
  const results = await eslint.lintFiles(["."]);
  const report = (await eslint.loadFormatter("stylish")).format(results);
  if (report) process.stdout.write(report);
  const lintErrors = results.reduce((sum, result) => sum + result.errorCount, 0);
  const layers = await layerViolations();
  if (layers) process.stdout.write(layers);
  process.exitCode = diagnostics.length || lintErrors || layers ? 1 : 0;
  keep("lint", cache, root);
}

main().catch((error) => {
  console.error(`lint: ${error.stack ?? error}`);
  process.exitCode = 1;
});
