import { defineConfig } from 'vitest/config';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLuaWithIncludes } from './tools/lua-include.mjs';

const root = dirname(fileURLToPath(import.meta.url));

// Mirror tsconfig.base.json paths so tests resolve @singleshot/* exactly as tsc and esbuild do.
const base = JSON.parse(readFileSync(resolve(root, 'tsconfig.base.json'), 'utf8')) as {
  compilerOptions: { paths: Record<string, string[]> };
};
const alias = Object.fromEntries(
  Object.entries(base.compilerOptions.paths).map(([name, [target]]) => [name, resolve(root, target as string)]),
);

export default defineConfig({
  resolve: { alias },
  plugins: [
    {
      name: 'lua-as-text',
      // The same include expansion as the esbuild build (tools/lua-include.mjs).
      transform(_code, id) {
        const file = id.split('?')[0] as string;
        if (!file.endsWith('.lua')) return undefined;
        const seen = new Set<string>();
        const text = readLuaWithIncludes(file, seen);
        for (const file of seen) this.addWatchFile(file);
        return { code: `export default ${JSON.stringify(text)};`, map: null };
      },
    },
  ],
  test: {
    // Benchmarks (`*.bench.test.ts`) print figures and assert only counts; they run
    // with `npm run bench:imap` (SINGLESHOT_BENCH=1), not in `npm test`.
    include: process.env.SINGLESHOT_BENCH === '1' ? ['**/*.bench.test.ts'] : ['libs/**/*.test.ts', 'apps/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: process.env.SINGLESHOT_BENCH === '1' ? ['node_modules/**'] : ['node_modules/**', '**/*.bench.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: ['default'],
  },
});
