#!/usr/bin/env node
// The CLI is bundled by tools/build.mjs (run by `npm ci` through `prepare`).
const path = require('node:path');
const main = path.resolve(__dirname, '../../../dist/apps/cli/main.js');
try {
  require.resolve(main);
} catch {
  console.error('singleshot: dist/apps/cli/main.js is missing; run `npm run build` first.');
  process.exit(1);
}
require(main);
