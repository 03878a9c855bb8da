#!/usr/bin/env node
// Thin launcher: the CLI compiled to dist/src/ and bundled by esbuild into dist/bundle/ (both built by
// `npm install` through the prepare script). The bundle loads one file per entry instead of a few hundred
// modules, which halves the time to the first TUI frame (docs/PERFORMANCE.md).
import { main } from '../dist/bundle/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`l20-setup: internal error: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 2;
  },
);
