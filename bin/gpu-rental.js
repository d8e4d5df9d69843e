#!/usr/bin/env node
"use strict";
const { main } = require("../dist/cli/index.js");
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`gpu-rental: ${(error && error.stack) || error}`);
    process.exit(1);
  },
);
