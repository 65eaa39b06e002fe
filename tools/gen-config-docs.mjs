// Writes docs/configuration.md from the config schema (libs/config/src/*schema*.ts):
// the introduction in tools/gen-config-docs.intro.md, then a table per section
// (path, type, default, description). `npm run docs:config` runs it;
// libs/config/src/config-reference.test.ts fails when the page is out of date.
import { readFileSync, writeFileSync } from 'node:fs';
import { importTs } from './import-ts.mjs';

const { renderConfigDocs } = await importTs('libs/config/src/config-reference.ts');
writeFileSync('docs/configuration.md', renderConfigDocs(readFileSync('tools/gen-config-docs.intro.md', 'utf8')));
console.log('wrote docs/configuration.md');
