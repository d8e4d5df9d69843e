// Jest's transform of the TypeScript of the tests and of the sources they load: esbuild's, type annotations
// stripped and modules made CommonJS, file by file. Types are checked by `npm run lint`, before jest starts,
// so the transform checks nothing; ts-jest's per-file transpile (TypeScript's compiler, loaded in every worker)
// is many times slower a file than esbuild's, which a fresh clone (no transform cache yet) pays for each file
// in each worker.
const crypto = require("node:crypto");
const { transformSync, version } = require("esbuild");

/** How tsconfig.json has TypeScript emit what esbuild would otherwise decide alone (ES2022 class fields). */
const OPTIONS = {
  loader: "ts",
  format: "cjs",
  target: "node20",
  sourcemap: "external",
  tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
};

module.exports = {
  process(source, file) {
    const { code, map } = transformSync(source, { ...OPTIONS, sourcefile: file });
    return { code, map };
  },
  getCacheKey(source, file, { configString }) {
    return crypto.createHash("sha256").update(version).update(JSON.stringify(OPTIONS)).update(file).update(configString).update(source).digest("hex");
  },
};
