import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// @singleshot/client is published alone: its build must load in plain Node
// with nothing of this repository next to it.
const root = resolve(__dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'singleshot-client-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('@singleshot/client package', () => {
  it('builds to CommonJS with types, requires nothing of ours, and loads in plain node', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg).toMatchObject({ name: '@singleshot/client', main: 'dist/index.js', types: 'dist/index.d.ts', files: ['dist'] });
    expect(pkg.dependencies).toBeUndefined();
    execFileSync(process.execPath, [resolve(root, '../../node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out]);
    const files = readdirSync(out).filter((f) => f.endsWith('.js'));
    expect(files).toContain('index.js');
    for (const f of files) expect(readFileSync(join(out, f), 'utf8')).not.toMatch(/require\("@singleshot\//);
    const loaded = execFileSync(process.execPath, ['-e', `const c = require(${JSON.stringify(join(out, 'index.js'))}); console.log(typeof c.createClient, typeof c.verifyDelivery)`], { cwd: tmpdir() }).toString().trim();
    expect(loaded).toBe('function function');
  });
});
