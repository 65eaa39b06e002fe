// Writes docs/configuration.md from the config schema (libs/config/src/*schema*.ts):
// the introduction in tools/gen-config-docs.intro.md, then a table per section
// (path, type, default, description). `npm run docs:config` runs it;
// libs/config/src/config-reference.test.ts fails when the page is out of date.
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { outputFiles } = await build({
  entryPoints: ['libs/config/src/config-reference.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  tsconfig: 'tsconfig.json',
  logLevel: 'warning',
});
const dir = mkdtempSync(join(tmpdir(), 'singleshot-config-docs-'));
try {
  const bundle = join(dir, 'config-reference.mjs');
  writeFileSync(bundle, outputFiles[0].text);
  const { renderConfigDocs } = await import(pathToFileURL(bundle).href);
  writeFileSync('docs/configuration.md', renderConfigDocs(readFileSync('tools/gen-config-docs.intro.md', 'utf8')));
  console.log('wrote docs/configuration.md');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
