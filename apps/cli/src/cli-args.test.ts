import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyArgument } from './key-arg';

// The built CLI (npm test builds before vitest), through the bin shim `npx singleshot` runs.
const ROOT = resolve(__dirname, '../../..');
const BIN = resolve(ROOT, 'apps/cli/bin/singleshot.js');
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });

describe('singleshot --version', () => {
  it("prints package.json's version", () => {
    const { version } = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = run(flag);
      expect(result.status).toBe(0);
      expect(result.stdout.trim()).toBe(version);
    }
  });
});

describe('a key argument that is not a key', () => {
  const key = 'ab'.repeat(32);

  it('is refused before Redis is asked, saying what a key looks like', () => {
    expect(keyArgument('a message key')(key.toUpperCase())).toBe(key);
    expect(() => keyArgument('a message key')('nope')).toThrow('"nope" is not a message key: a key is 64 hex characters');
    expect(() => keyArgument('a message key')(key.slice(1))).toThrow('is not a message key');
    expect(() => keyArgument('a message key')(`${key}0`)).toThrow('is not a message key');
  });

  it.each([
    [['ops', 'show', 'nope'], 'not an operation or message key'],
    [['messages', 'show', 'nope'], 'not a message key'],
    [['dlq', 'show', 'nope'], 'not an operation key'],
  ])('%j exits non-zero with the reason and no stack trace', (args, reason) => {
    // No Redis anywhere near: the argument must be refused before any connection.
    const result = run(...args, '--config', resolve(ROOT, 'no-such-config.yaml'));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(reason);
    expect(result.stderr).toContain('64 hex characters');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stderr).not.toContain('cannot shard');
  });
});
