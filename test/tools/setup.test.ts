import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// tools/ is not a workspace project, so the tool is loaded by path (typed by its .d.mts).
const ROOT = resolve(__dirname, '../..');
const TOOL = join(ROOT, 'tools/setup.mjs');
const { DEFAULT_LIST, missingPackages, parsePackageList, planSetup } = (await import(
  pathToFileURL(TOOL).href
)) as typeof import('../../tools/setup.mjs');

const tmp = mkdtempSync(join(tmpdir(), 'singleshot-setup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function file(path: string, text: string, mode = 0o644): string {
  const full = join(tmp, path);
  mkdirSync(resolve(full, '..'), { recursive: true });
  writeFileSync(full, text);
  chmodSync(full, mode);
  return full;
}

const list = parsePackageList(readFileSync(DEFAULT_LIST, 'utf8'));
const byName = (names: string[]) => names.map((name) => list.find((entry) => entry.name === name)!);

describe('tools/system-packages.txt', () => {
  it('lists every package .ci/run installed before the list existed, each with a check', () => {
    const installedByCi = ['redis-server', 'dovecot-imapd', 'chromium', 'prometheus', 'docker-compose', 'postgresql', 'rabbitmq-server', 'nats-server', 'kcat', 'iproute2'];
    expect(list.map((entry) => entry.name).sort()).toEqual([...installedByCi].sort());
    for (const entry of list) expect(entry.checks.length, entry.name).toBeGreaterThan(0);
  });

  it('is the only package list: .ci/run installs nothing itself and the test command runs the setup first', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).not.toMatch(/apt-get|dovecot-imapd/);
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.setup).toBe('node tools/setup.mjs');
    expect(scripts.pretest).toBe('npm run setup');
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('`npm ci && npm test`');
  });

  it('keeps the rule for Debian-started daemons: dovecot and prometheus always stopped, postgresql and rabbitmq only when installed here', () => {
    expect(list.flatMap((entry) => entry.stop).sort()).toEqual(['dovecot', 'prometheus']);
    expect(list.flatMap((entry) => entry.stopIfNew).sort()).toEqual(['postgresql', 'rabbitmq-server']);
  });
});

describe('parsePackageList', () => {
  it('reads packages, checks and services, skipping comments and blank lines', () => {
    const text = '# header\n\npkg-a  tool-a /opt/a/*/bin/a   stop:a-svc  # trailing\npkg-b /usr/sbin/b stop-new:b-svc\n';
    expect(parsePackageList(text)).toEqual([
      { name: 'pkg-a', checks: ['tool-a', '/opt/a/*/bin/a'], stop: ['a-svc'], stopIfNew: [] },
      { name: 'pkg-b', checks: ['/usr/sbin/b'], stop: [], stopIfNew: ['b-svc'] },
    ]);
  });

  it('refuses a package without a check and a package listed twice', () => {
    expect(() => parsePackageList('pkg-a stop:x\n')).toThrow('line 1: package pkg-a has no check');
    expect(() => parsePackageList('pkg-a a\npkg-a b\n')).toThrow('line 2: package pkg-a is listed twice');
  });
});

describe('missingPackages', () => {
  const bin = join(tmp, 'bin');
  file('bin/present-tool', '#!/bin/sh\n', 0o755);
  file('bin/not-executable', 'text\n', 0o644);
  file('lib/pg/16/bin/initdb', '#!/bin/sh\n', 0o755);

  it('finds commands on the given PATH and executable files, a * matching within one folder', () => {
    const entries = parsePackageList(
      [
        `by-command present-tool`,
        `not-executable not-executable`,
        `absent missing-tool ${join(tmp, 'nowhere/tool')}`,
        `by-glob ${join(tmp, 'lib/pg/*/bin/initdb')}`,
        `glob-absent ${join(tmp, 'lib/pg/*/bin/postgres')}`,
        `second-check missing-tool ${join(tmp, 'bin/present-tool')}`,
      ].join('\n'),
    );
    expect(missingPackages(entries, bin).map((entry) => entry.name)).toEqual(['not-executable', 'absent', 'glob-absent']);
    expect(missingPackages(entries, '').map((entry) => entry.name)).toEqual(['by-command', 'not-executable', 'absent', 'glob-absent']);
  });
});

describe('planSetup', () => {
  it('as root: updates, installs what is missing, stops dovecot and prometheus, and postgresql only when it installed it', () => {
    expect(planSetup(list, byName(['postgresql', 'kcat']), true).commands).toEqual([
      ['apt-get', 'update', '-qq'],
      ['apt-get', 'install', '-y', '--no-install-recommends', 'postgresql', 'kcat'],
      ['service', 'dovecot', 'stop'],
      ['service', 'prometheus', 'stop'],
      ['service', 'postgresql', 'stop'],
    ]);
    expect(planSetup(list, [], true)).toEqual({
      commands: [
        ['service', 'dovecot', 'stop'],
        ['service', 'prometheus', 'stop'],
      ],
      advice: undefined,
    });
  });

  it('not root: runs nothing and gives the exact sudo command, or nothing when all is present', () => {
    expect(planSetup(list, byName(['dovecot-imapd', 'chromium']), false)).toEqual({
      commands: [],
      advice: 'sudo apt-get install -y --no-install-recommends dovecot-imapd chromium',
    });
    expect(planSetup(list, [], false)).toEqual({ commands: [], advice: undefined });
  });
});

describe('setup.mjs as a command', () => {
  const emptyPath = join(tmp, 'empty-bin');
  mkdirSync(emptyPath, { recursive: true });
  const listFile = file('list.txt', 'singleshot-test-pkg singleshot-test-tool stop-new:singleshot-test-svc\n');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [TOOL, '--list', listFile, ...args], { encoding: 'utf8', env: { ...process.env, PATH: emptyPath } });

  it('--check reports what is missing and exits 1, and exits 0 once it is there', () => {
    const missing = run('--check');
    expect(missing.status).toBe(1);
    expect(missing.stdout).toContain('missing system packages: singleshot-test-pkg');
    file('empty-bin/singleshot-test-tool', '#!/bin/sh\n', 0o755);
    try {
      expect(run('--check').status).toBe(0);
    } finally {
      rmSync(join(emptyPath, 'singleshot-test-tool'));
    }
  });

  it('--dry-run prints the apt-get commands as root, and the sudo command with exit 1 otherwise', () => {
    const result = run('--dry-run');
    if (process.getuid?.() === 0) {
      expect(result.status).toBe(0);
      expect(result.stdout.trim().split('\n')).toEqual([
        'DEBIAN_FRONTEND=noninteractive apt-get update -qq',
        'DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends singleshot-test-pkg',
        'service singleshot-test-svc stop',
      ]);
    } else {
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('sudo apt-get install -y --no-install-recommends singleshot-test-pkg');
    }
  });
});
