#!/usr/bin/env node
"use strict";
const path = require("node:path");

// A clone runs from its compiled dist/, which `npm run build` makes (an installed package ships it): say so in a
// line, not with Node's stack of a missing module.
const BUILT = [path.join("dist", "provider", "code-cache.js"), path.join("dist", "cli", "index.js")];
let cli;
try {
  // The code cache first (provider/code-cache.ts): an installed package's modules compile from V8's cached code,
  // some 0.1 CPU-s less of every command's start (an emulator's, a test's).
  require("../dist/provider/code-cache.js");
  cli = require("../dist/cli/index.js");
} catch (error) {
  if (error && error.code === "MODULE_NOT_FOUND" && BUILT.some((file) => String(error.message).includes(file))) {
    console.error(`gpu-rental: ${path.resolve(__dirname, "..", "dist")} is not built yet: run \`npm run build\` in ${path.resolve(__dirname, "..")} first`);
    process.exit(1);
  }
  throw error;
}
cli.run(process.argv.slice(2));
