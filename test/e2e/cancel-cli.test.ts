import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import { OperationStore } from '@singleshot/store';
import {
  CLI_MAIN,
  REPO_ROOT,
  spawnApps,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// `singleshot cancel` and what `ops show` / `messages show` then say, against
// ingest and decision processes: a route with a delay makes scheduled
// operations (no delivery app: nothing is due during the test), the CLI
// cancels them straight on Redis with an operator's identity.
let redis: TestRedis;
let fleet: AppProcess;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
let ingest: string;

const opOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('billing', id), action: parseAction('notify'), recipient, channel: 'webhook' });

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const post = (body: Record<string, unknown>) =>
  fetch(`${ingest}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ source: 'billing', type: 'invoice.due', data: {}, ...body }) });

beforeAll(async () => {
  redis = await startTestRedis();
  const config = testConfig({
    redisUrl: redis.url,
    routes: [{ name: 'reminders', match: { source: 'billing' }, action: 'notify', channel: 'webhook', recipients: 'event', delay: '2h', template: { text: 'Pay' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: 'http://127.0.0.1:9/never', timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision', configFile);
  ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  rt = await testRuntime(config);
  expect((await post({ id: 'inv-1', recipients: ['a@x.test', 'b@x.test'] })).status).toBe(202);
  await waitUntil(
    async () => (await rt.operations.get(opOf('inv-1', 'a@x.test')))?.status === 'scheduled' && (await rt.operations.get(opOf('inv-1', 'b@x.test')))?.status === 'scheduled',
    'both operations scheduled',
    { timeoutMs: 20_000 },
  );
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('singleshot cancel', () => {
  const a = opOf('inv-1', 'a@x.test');
  const b = opOf('inv-1', 'b@x.test');

  it('ops show says when a scheduled operation is due and why', () => {
    const shown = cli('ops', 'show', a);
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/status\s+scheduled for \d{4}-\d\d-\d\dT/);
    expect(shown.stdout).toMatch(/scheduled\s+for \d{4}-\d\d-\d\dT\S+ \(delay\)/);
  });

  it('cancels one recipient of an event by source and id, and says so per operation', async () => {
    const done = cli('cancel', '--source', 'billing', '--id', 'inv-1', '--recipient', 'A@X.test', '--reason', 'paid already', '--by', 'tester');
    expect(done.status, done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`${a}\\s+a@x.test\\s+webhook\\s+cancelled`));
    expect(done.stdout).not.toContain(b);
    expect(done.stdout).toContain('pending: no');

    const record = await rt.operations.get(a);
    expect(record).toMatchObject({ status: 'cancelled', cancelledBy: 'cli:tester', cancelReason: 'paid already' });
    const journal = await rt.journal.forOperation(a, record!.journalIds);
    expect(journal.map((e) => [e.type, e.fields.by])).toEqual([['scheduled', undefined], ['cancelled', 'cli:tester']]);
    expect((await rt.operations.get(b))?.status).toBe('scheduled');

    const shown = cli('ops', 'show', a);
    expect(shown.stdout).toMatch(/status\s+cancelled/);
    expect(shown.stdout).toMatch(/cancelled\s+by cli:tester: paid already/);

    // A repeat changes nothing and says so.
    const again = cli('cancel', '--source', 'billing', '--id', 'inv-1', '--recipient', 'a@x.test', '--by', 'tester', '--json');
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ by: 'cli:tester', operations: [{ operationKey: a, recipient: 'a@x.test', channel: 'webhook', outcome: 'already_cancelled' }], pending: false });
  });

  it('messages show gives the tombstone and each operation by its new status', () => {
    const shown = cli('messages', 'show', eventMessageKey('billing', 'inv-1'));
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/cancelled\s+a@x\.test, at \S+ by cli:tester: paid already/);
    expect(shown.stdout).toMatch(new RegExp(`${a}\\s+cancelled\\s+a@x.test`));
    expect(shown.stdout).toMatch(new RegExp(`${b}\\s+scheduled for \\S+\\s+b@x.test`));
  });

  it('a cancel by message key while an attempt holds an operation answers in_flight; ops show says a cancel is requested', async () => {
    // A delivery worker's claim once the operation is due (its clock past the route's delay).
    const worker = new OperationStore(rt.redis, rt.keys, { retentionMs: rt.retentionMs, now: () => Date.now() + 3 * 3_600_000 });
    const claim = await worker.claim({ operationKey: b, messageKey: eventMessageKey('billing', 'inv-1'), recipient: 'b@x.test', channel: 'webhook', owner: 'test-worker', leaseMs: 60_000 });
    expect(claim.kind).toBe('go');
    const done = cli('cancel', '--message', eventMessageKey('billing', 'inv-1'), '--by', 'tester');
    expect(done.status, done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`${b}\\s+b@x.test\\s+webhook\\s+in_flight`));
    expect(done.stdout).toMatch(new RegExp(`${a}\\s+a@x.test\\s+webhook\\s+already_cancelled`));
    const shown = cli('ops', 'show', b);
    expect(shown.stdout).toMatch(/status\s+sending, cancel requested/);
    expect(shown.stdout).toMatch(/cancelled\s+requested at \S+ by cli:tester, during an attempt/);
  });

  it('a cancellation key cancelled before any event carries it: pending, and the later event is born cancelled', async () => {
    const done = cli('cancel', '--source', 'billing', '--key', 'contract-7', '--reason', 'contract ended', '--by', 'tester');
    expect(done.status, done.stderr).toBe(0);
    expect(done.stdout).toContain('no operations yet');
    expect(done.stdout).toContain('pending: yes');
    expect((await post({ id: 'inv-2', recipients: ['c@x.test'], cancellationKey: 'contract-7' })).status).toBe(202);
    const c = opOf('inv-2', 'c@x.test');
    await waitUntil(async () => (await rt.operations.get(c))?.status === 'cancelled', 'the later operation born cancelled', { timeoutMs: 20_000 });
    // The key's who and why reach the message's tombstone, which the decision read.
    expect((await rt.messages.get(eventMessageKey('billing', 'inv-2')))?.cancelled).toMatchObject({ recipients: '*', by: 'cli:tester', reason: 'contract ended' });
  });

  it.each([
    [[], 'give exactly one target'],
    [['--message', 'a'.repeat(64), '--id', 'x', '--source', 'billing'], 'give exactly one target'],
    [['--source', 'billing', '--id', 'x', '--key', 'k'], 'give exactly one target'],
    [['--id', 'inv-1'], '--id needs --source'],
    [['--key', 'k'], '--key needs --source'],
    [['--message', 'nope'], 'is not a message key'],
    [['--message', 'a'.repeat(64), '--source', 'billing'], 'leave out --source'],
  ])('%j is a usage error (exit 2) that names the problem', (args, problem) => {
    const result = cli('cancel', ...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(problem);
    expect(result.stdout).toBe('');
  });
});
