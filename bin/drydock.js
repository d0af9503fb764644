#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through `prepare`).
import { main } from '../dist/src/cli/main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`drydock: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
