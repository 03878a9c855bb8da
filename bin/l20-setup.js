#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import { main } from '../dist/src/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`l20-setup: internal error: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 2;
  },
);
