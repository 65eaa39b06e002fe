import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runtime } from '@singleshot/runtime';
import { readSuppressionAudit } from '@singleshot/store';
import { CLI_MAIN, REPO_ROOT, startTestRedis, testConfig, writeConfigFile, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// `singleshot suppressions` straight on Redis: what it adds is what the claim
// of the next operation reads, by `cli:<name>` with origin `operator`, in the
// audit; a command line that names nothing usable exits 2 and touches nothing.
let redis: TestRedis;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI_MAIN, 'suppressions', ...args, '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let n = 0;
const claim = (recipient: string) => rt.operations.claim({ operationKey: (++n).toString(16).padStart(64, 'b'), messageKey: 'a'.repeat(64), recipient, channel: 'webhook', owner: 'test', leaseMs: 30_000 });

beforeAll(async () => {
  redis = await startTestRedis();
  const config = testConfig({
    redisUrl: redis.url,
    routes: [{ name: 'hooks', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { text: 'hi' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: 'http://127.0.0.1:9/never', timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  rt = await testRuntime(config);
});

afterAll(async () => {
  await rt?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('singleshot suppressions', () => {
  it.each([
    [['add', 'x@x.test', '--reason', 'r'], '--channel'],
    [['add', 'x@x.test', '--channel', 'webhook'], '--reason'],
    [['add', 'x@x.test', '--channel', 'webhook', '--reason', 'r', '--expires', 'soon'], '--expires'],
    [['add', 'x@x.test', '--channel', 'webhook', '--reason', 'r', '--expires', '2001-01-01T00:00:00Z'], 'not in the future'],
    [['add', 'x@x.test', '--channel', 'pigeon', '--reason', 'r'], 'no channel "pigeon"'],
    [['remove', 'x@x.test'], '--channel'],
    [['list', '--limit', '0'], '--limit'],
    [['list', '--offset', '10'], '--offset is gone: the list is paged by --cursor'],
    [['list', '--cursor', 'not-a-cursor'], 'cursor: not one this list handed out'],
    [['show', ' '], 'RECIPIENT'],
  ])('%j exits 2 naming %s', async (args, named) => {
    const { status, stderr } = cli(...args);
    expect(status).toBe(2);
    expect(stderr).toContain(`singleshot suppressions ${args[0]}:`);
    expect(stderr).toContain(named);
    expect(await rt.redis.exists(rt.keys.suppressionAudit())).toBe(0);
  });

  it('add stops the next claim of the recipient, as the operator, in the audit; show and list print it', async () => {
    const added = cli('add', 'Held@X.test', '--channel', 'webhook', '--reason', 'asked by support', '--by', 'ops', '--json');
    expect(added.status, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      added: true,
      by: 'cli:ops',
      recipient: { recipient: 'held@x.test', suppressions: [{ channel: 'webhook', reason: 'asked by support', origin: 'operator', by: 'cli:ops', expired: false }] },
    });
    expect(await claim('held@x.test')).toEqual({ kind: 'ended', status: 'suppressed', endedNow: true, reason: 'recipient_suppressed' });
    const again = cli('add', 'held@x.test', '--channel', 'webhook', '--reason', 'again');
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('already suppressed');

    const show = cli('show', 'HELD@x.test');
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/held@x\.test\s+webhook\s+\*\s+asked by support\s+operator\s+cli:ops/);
    const list = cli('list', '--json');
    expect(JSON.parse(list.stdout)).toMatchObject({ nextCursor: null, recipients: [{ recipient: 'held@x.test' }] });

    const audit = await readSuppressionAudit(rt.redis, rt.keys, { limit: 10 });
    expect(audit.map((e) => [e.change, e.recipient, e.detail.by])).toEqual([
      ['add_existing', 'held@x.test', expect.stringMatching(/^cli:.+@.+/)],
      ['add', 'held@x.test', 'cli:ops'],
    ]);

    // A second one, newer on the list: one a page, the next by the cursor the first printed.
    expect(cli('add', 'later@x.test', '--channel', 'webhook', '--reason', 'r').status).toBe(0);
    const first = cli('list', '--limit', '1');
    expect(first.stdout).toContain('later@x.test');
    const cursor = /^more: --cursor (\S+)$/m.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();
    const second = JSON.parse(cli('list', '--limit', '1', '--cursor', cursor!, '--json').stdout) as { recipients: Array<{ recipient: string }>; nextCursor: string | null };
    expect(second).toEqual({ recipients: [expect.objectContaining({ recipient: 'held@x.test' })], nextCursor: null });
    expect(cli('remove', 'later@x.test', '--channel', 'webhook').status).toBe(0);
  });

  it('remove lets the next claim go; what it stopped stays suppressed', async () => {
    const stoppedKey = n.toString(16).padStart(64, 'b');
    const removed = cli('remove', 'held@x.test', '--channel', 'webhook', '--by', 'ops');
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('removed');
    expect(cli('remove', 'held@x.test', '--channel', 'webhook').stdout).toContain('no such suppression');
    expect((await claim('held@x.test')).kind).toBe('go');
    expect((await rt.operations.get(stoppedKey))?.status).toBe('suppressed');
    expect(cli('list').stdout).toContain('no suppressions');
  });
});
