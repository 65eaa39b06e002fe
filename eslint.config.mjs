import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.nx/**', '.singleshot/**', 'test-artifacts/**', 'apps/cli/bin/**', 'tools/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'scope:core', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
            { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:lib', 'type:app', 'type:test'] },
          ],
        },
      ],
    },
  },
  {
    // The CLI prints to stdout by design.
    files: ['apps/cli/**/*.ts', 'test/chaos/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
