// Imports one TypeScript module of the repo from a tool script: bundled with
// esbuild (the repo's tsconfig paths resolve the @singleshot/* imports) into a
// temporary file, imported, and the file removed.
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The exports of `entry` (a path from the repo root, e.g. `libs/core/src/lifecycle.ts`). */
export async function importTs(entry) {
  const { outputFiles } = await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', write: false, tsconfig: 'tsconfig.json', logLevel: 'warning' });
  const dir = mkdtempSync(join(tmpdir(), 'singleshot-tool-'));
  try {
    const bundle = join(dir, 'module.mjs');
    writeFileSync(bundle, outputFiles[0].text);
    return await import(pathToFileURL(bundle).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
