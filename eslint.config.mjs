import { readFileSync, readdirSync } from 'node:fs';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

// Module boundaries (docs/architecture.md, "The libraries": dependencies point
// down): libs never import apps; core, the published client and the published
// outbox import nothing of ours; no app imports another, except the CLI, which
// runs them in one process. Tests may also use the test harness. Nx computes
// the graph from the TypeScript imports (`npm run lint` refreshes it first with
// `nx show projects`).

// Every app's `app:<name>` tag, read from apps/*/project.json, so a new app
// gets the no-other-app rule without an edit here.
const appTags = readdirSync(new URL('./apps/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => JSON.parse(readFileSync(new URL(`./apps/${entry.name}/project.json`, import.meta.url), 'utf8')).tags ?? [])
  .filter((tag) => tag.startsWith('app:'));
const appRules = appTags
  .filter((tag) => tag !== 'app:cli')
  .map((tag) => ({ sourceTag: tag, notDependOnLibsWithTags: appTags.filter((other) => other !== tag) }));

// The libraries in layers, each importing only layers below it (tags
// `layer:<n>` in libs/*/project.json; docs/architecture.md, "The libraries"):
// 0 the leaves (core, tracing, templates, documents); 1 what needs only core
// (store: the operation's life and its Redis layout; http, mail, config);
// 2 observability, providers; 3 queues; 4 intake, story; 5 runtime, the
// dependency bag every app's main builds. A lib without a layer tag (the
// published client and outbox, the load kit) has rules of its own below.
const LAYERS = 6;
const layerRules = Array.from({ length: LAYERS }, (_, n) => ({
  sourceTag: `layer:${n}`,
  onlyDependOnLibsWithTags: Array.from({ length: n }, (_, below) => `layer:${below}`),
}));

const constraints = (extraForTests) => [
  // A test may set up its lib with any other (mail's IMAP test keeps its cursor in the store).
  ...layerRules.map((rule) => ({ ...rule, onlyDependOnLibsWithTags: [...rule.onlyDependOnLibsWithTags, ...(extraForTests ? ['type:lib', 'type:test'] : [])] })),
  { sourceTag: 'scope:core', onlyDependOnLibsWithTags: extraForTests ? ['type:test'] : [] },
  // The published producer client (@singleshot/client) ships alone: nothing of ours at run time.
  { sourceTag: 'scope:client', onlyDependOnLibsWithTags: extraForTests ? ['type:test'] : [] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', ...(extraForTests ? ['type:test'] : [])] },
  // The published outbox (@singleshot/outbox) ships alone too (`pg` is its peer dependency).
  { sourceTag: 'scope:outbox', onlyDependOnLibsWithTags: extraForTests ? ['type:test'] : [] },
  ...appRules,
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:app', ...(extraForTests ? ['type:test'] : [])] },
  // The harness (servers, sinks, process control) imports nothing of ours but
  // the load kit's port picker (the kit imports only libs/core, whose tests use
  // no harness), so lib tests can use it without closing a dependency cycle.
  { sourceTag: 'scope:harness', onlyDependOnLibsWithTags: ['scope:harness', 'scope:loadkit'] },
  { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:lib', 'type:app', 'type:test'] },
  // The load kit (the provider sink, the fleet's start and stop, /proc readers)
  // is shared by the CLI's loadtest and the benchmark, and stays off the path
  // they measure: of ours it may import only libs/core.
  { sourceTag: 'scope:loadkit', onlyDependOnLibsWithTags: ['scope:core', ...(extraForTests ? ['type:test'] : [])] },
  // The benchmark measures systems from outside (processes, HTTP, Redis INFO):
  // of ours it imports only libs/core's pure helpers (the percentile it shares
  // with the loadtest) and the load kit, never code on the path it measures.
  { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['scope:core', 'scope:loadkit'] },
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
