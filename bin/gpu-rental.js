#!/usr/bin/env node
"use strict";
const { main, UsageError } = require("../dist/cli/index.js");
main(process.argv.slice(2)).catch((error) => {
  const usage = error instanceof UsageError || String((error && error.code) || "").startsWith("ERR_PARSE_ARGS");
  console.error(`gpu-rental: ${error && error.message ? error.message : error}`);
  process.exit(usage ? 2 : 1);
});
