import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE_NODE_MAJOR } from '../deploy/dockerfile-checks';

/**
 * The supported Node.js lines are written in several places: package.json's
 * engines (and its copy in package-lock.json), the esbuild target, the lines
 * .ci/run tests, the image's base and the client's engines. They must agree.
 */
const ROOT = resolve(__dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const json = (path: string) => JSON.parse(read(path)) as { engines?: { node?: string }; packages?: Record<string, { engines?: { node?: string } }> };

/** The majors a range like `^22.22.2 || ^24.15.0` admits, one per `||` alternative. */
function engineMajors(range: string): number[] {
  return range.split('||').map((alternative) => Number(/^\s*(?:\^|>=)?\s*(\d+)/.exec(alternative)?.[1]));
}

const engines = json('package.json').engines?.node ?? '';
const ci = read('.ci/run');
/** The lines .ci/run fetches, in the order it runs them. */
const ciMajors = [...ci.matchAll(/node-from-npm\.sh (\d+)/g)].map((m) => Number(m[1]));
/** The subshells of .ci/run: the Node each puts first on PATH, and its lines. */
const blocks = [...ci.matchAll(/^\(\n([\s\S]*?)^\)$/gm)].map(([, body = '']) => ({
  node: Number(/export PATH="\$node(\d+):\$PATH"/.exec(body)?.[1]),
  lines: body.split('\n').map((line) => line.trim()),
}));
/** The Node the subshell running exactly `command` runs it on. */
const nodeBefore = (command: string) => blocks.filter((block) => block.lines.includes(command)).map((block) => block.node);

describe('supported Node.js lines', () => {
  it('engines admits 22 and 24, and no longer 20', () => {
    expect(engineMajors(engines)).toEqual([22, 24]);
    expect(engines).not.toMatch(/\b20\b/);
    expect(json('package-lock.json').packages?.['']?.engines?.node).toBe(engines);
  });

  it('CI runs the README test command on the main line and the whole suite on every other line engines admits', () => {
    expect(ciMajors).toEqual(engineMajors(engines));
    expect(nodeBefore('npm test')).toEqual([22]);
    expect(nodeBefore('npx vitest run')).toEqual([24]);
    expect(ci).not.toMatch(/node20|node-linux-\S+@20|Node\.js 20/);
  });

  it('the bundles target the oldest line, and the image runs the main line', () => {
    expect(/target: 'node(\d+)'/.exec(read('tools/build.mjs'))?.[1]).toBe('22');
    expect(/^ARG NODE_IMAGE=node:(\d+)-/m.exec(read('deploy/Dockerfile'))?.[1]).toBe('22');
    expect(IMAGE_NODE_MAJOR).toBe(22);
  });

  it('the client package and the docs name the same lines', () => {
    expect(json('libs/client/package.json').engines?.node).toBe('>=22');
    expect(read('README.md')).toMatch(/Node\.js 22 and 24/);
    expect(read('CONTRIBUTING.md')).not.toMatch(/20\.18/);
  });
});
