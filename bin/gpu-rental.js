#!/usr/bin/env node
"use strict";
const path = require("node:path");

// A clone runs from its compiled dist/, which `npm run build` makes (an installed package ships it): say so in a
// line, not with Node's stack of a missing module.
let cli;
try {
  cli = require("../dist/cli/index.js");
} catch (error) {
  if (error && error.code === "MODULE_NOT_FOUND" && String(error.message).includes(path.join("dist", "cli", "index.js"))) {
    console.error(`gpu-rental: ${path.resolve(__dirname, "..", "dist")} is not built yet: run \`npm run build\` in ${path.resolve(__dirname, "..")} first`);
    process.exit(1);
  }
  throw error;
}
cli.run(process.argv.slice(2));
