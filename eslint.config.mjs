import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

// Module boundaries (DESIGN.md "Dependencies point down"): libs never import
// apps; core imports nothing of ours; ingest, decision and delivery never import
// each other (only the CLI, which runs them in one process, imports them).
// Tests may also use the test harness. Nx computes the graph from the
// TypeScript imports (`npm run lint` refreshes it first with `nx show projects`).
const constraints = (extraForTests) => [
  { sourceTag: 'scope:core', onlyDependOnLibsWithTags: extraForTests ? ['type:test'] : [] },
  // The published producer client (@singleshot/client) ships alone: nothing of ours at run time.
  { sourceTag: 'scope:client', onlyDependOnLibsWithTags: extraForTests ? ['type:test'] : [] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', ...(extraForTests ? ['type:test'] : [])] },
  { sourceTag: 'app:ingest', notDependOnLibsWithTags: ['app:decision', 'app:delivery', 'app:cli', 'app:dashboard'] },
  { sourceTag: 'app:decision', notDependOnLibsWithTags: ['app:ingest', 'app:delivery', 'app:cli', 'app:dashboard'] },
  { sourceTag: 'app:delivery', notDependOnLibsWithTags: ['app:ingest', 'app:decision', 'app:cli', 'app:dashboard'] },
  { sourceTag: 'app:dashboard', notDependOnLibsWithTags: ['app:ingest', 'app:decision', 'app:delivery', 'app:cli'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:app', ...(extraForTests ? ['type:test'] : [])] },
  // The harness (servers, sinks, process control) imports nothing of ours, so
  // lib tests can use it without closing a dependency cycle.
  { sourceTag: 'scope:harness', onlyDependOnLibsWithTags: ['scope:harness'] },
  { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:lib', 'type:app', 'type:test'] },
  // The benchmark measures systems from outside (processes, HTTP, Redis INFO):
  // of ours it imports only libs/core's pure helpers (the percentile it shares
  // with the loadtest), never code on the path it measures.
  { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['scope:core'] },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.nx/**', '.singleshot/**', 'test-artifacts/**', 'apps/cli/bin/**', 'tools/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
      '@nx/enforce-module-boundaries': ['error', { allow: [], depConstraints: constraints(false) }],
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { allow: [], depConstraints: constraints(true) },
      ],
    },
  },
  {
    // The CLI and the chaos driver print to stdout by design.
    files: ['apps/cli/**/*.ts', 'test/chaos/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
