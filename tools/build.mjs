// Bundles every app (and the chaos driver) into runnable CommonJS under dist/.
// Workspace libraries (@singleshot/*) are bundled in; npm packages stay external
// so node resolves them from node_modules at run time.
import { build } from 'esbuild';
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { luaIncludePlugin } from './lua-include.mjs';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const external = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})];

const entries = {};
for (const app of readdirSync('apps')) {
  const main = join('apps', app, 'src', 'main.ts');
  if (existsSync(main)) entries[`apps/${app}/main`] = main;
}
entries['test/chaos/main'] = 'test/chaos/main.ts';
entries['test/chaos/sweep'] = 'test/chaos/sweep.ts';
// The benchmark driver and its peer systems: dist/bench/main.js, dist/bench/peer.js.
for (const name of ['main', 'peer']) {
  if (existsSync(`bench/src/${name}.ts`)) entries[`bench/${name}`] = `bench/src/${name}.ts`;
}

await build({
  entryPoints: entries,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  sourcemap: true,
  external,
  plugins: [luaIncludePlugin()],
  logLevel: 'warning',
  tsconfig: 'tsconfig.json',
});
console.log(`built ${Object.keys(entries).length} entr${Object.keys(entries).length === 1 ? 'y' : 'ies'} into dist/`);
