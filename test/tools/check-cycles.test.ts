import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// tools/ is not a workspace project, so the tool is loaded by path (typed by its .d.mts).
const TOOL = resolve(__dirname, '../../tools/check-cycles.mjs');
const { findCycles } = (await import(pathToFileURL(TOOL).href)) as typeof import('../../tools/check-cycles.mjs');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tiny workspace: a tsconfig.base.json with one alias and the given files. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'singleshot-cycles-'));
  dirs.push(root);
  const all: Record<string, string> = {
    'tsconfig.base.json': JSON.stringify({ compilerOptions: { paths: { '@fx/a': ['./libs/a/src/index.ts'] } } }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

// Without the cycle: the alias and relative imports resolve, the barrel re-exports, no cycle.
const ACYCLIC = {
  'libs/a/src/index.ts': "export * from './one';\n",
  // The commented-out import would close main → index → one → main: comments are not edges.
  'libs/a/src/one.ts': "import type { Two } from './two';\n// import { main } from '../../../apps/b/src/main';\nexport const one = (t: Two) => t;\n",
  'libs/a/src/two.ts': 'export interface Two { n: number }\n',
  'apps/b/src/main.ts': "import { one } from '@fx/a';\none({ n: 1 });\n",
};

describe('tools/check-cycles.mjs', () => {
  it('passes a workspace without cycles', () => {
    const root = fixture(ACYCLIC);
    expect(findCycles(root)).toEqual([]);
    const run = spawnSync(process.execPath, [TOOL, root], { encoding: 'utf8' });
    expect(run.status).toBe(0);
  });

  it('finds a cycle through a type import and a path alias, and the CLI exits 1', () => {
    // two.ts now imports the lib through its alias: two → index → one → two.
    const root = fixture({ ...ACYCLIC, 'libs/a/src/two.ts': "import type { one } from '@fx/a';\nexport interface Two { n: number; f?: typeof one }\n" });
    expect(findCycles(root)).toEqual([
      { files: ['libs/a/src/index.ts', 'libs/a/src/one.ts', 'libs/a/src/two.ts'], cycle: ['libs/a/src/index.ts', 'libs/a/src/one.ts', 'libs/a/src/two.ts', 'libs/a/src/index.ts'] },
    ]);
    const run = spawnSync(process.execPath, [TOOL, root], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('libs/a/src/index.ts -> libs/a/src/one.ts -> libs/a/src/two.ts -> libs/a/src/index.ts');
  });

  it('finds a cycle between test files through relative imports', () => {
    const root = fixture({ ...ACYCLIC, 'test/x.ts': "export { y } from './y';\nexport const x = 1;\n", 'test/y.ts': "import { x } from './x.js';\nexport const y = x;\n" });
    expect(findCycles(root).map((c) => c.files)).toEqual([['test/x.ts', 'test/y.ts']]);
  });
});
