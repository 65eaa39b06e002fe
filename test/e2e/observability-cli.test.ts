import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { QUEUES } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  CLI_MAIN,
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The operator commands against a live fleet: `messages show`, `journal tail
// [--follow] [--since] [--limit]` and `queues`, as tables and as `--json`.
let redis: TestRedis;
let sink: HttpSink;
let fleet: AppProcess;
let rt: Runtime;
let configFile: string;
let cleanup: () => void;
let ingest: string;

const messageKey = eventMessageKey('shop', 'evt-cli');
const opOf = (recipient: string) => operationKey({ messageKey, action: parseAction('notify'), recipient, channel: 'webhook' });
const sentKey = opOf('ok@example.com');
const deadKey = opOf('bad@example.com');

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI_MAIN, ...args, '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const post = (id: string, recipients: string[]) =>
  fetch(`${ingest}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients, data: {} }),
  });

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  fleet = spawnApps('ingest,decision,delivery', configFile);
  ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  rt = await testRuntime(config);
  sink.scriptFor('bad@example.com', { status: 404 });
  expect((await post('evt-cli', ['ok@example.com', 'bad@example.com'])).status).toBe(202);
  expect((await post('evt-cli', ['ok@example.com', 'bad@example.com'])).status).toBe(202);
  await waitUntil(async () => (await rt.operations.get(sentKey))?.status === 'sent' && (await rt.operations.get(deadKey))?.status === 'dead', 'one sent, one dead', { timeoutMs: 30_000 });
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('singleshot messages show', () => {
  it('prints the arrivals and a table of the operations, or the same as JSON', () => {
    const table = cli('messages', 'show', messageKey);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain(`message ${messageKey}`);
    expect(table.stdout).toMatch(/arrivals\s+2 \(api×2\)/);
    expect(table.stdout).toMatch(/OPERATION\s+STATUS\s+RECIPIENT\s+CHANNEL\s+PROVIDER\s+EXTERNAL ID\s+UPDATED/);
    expect(table.stdout).toMatch(new RegExp(`${sentKey}\\s+sent\\s+ok@example.com\\s+webhook\\s+primary\\s+${sink.accepted.get(sentKey)?.id}`));
    expect(table.stdout).toMatch(new RegExp(`${deadKey}\\s+dead\\s+bad@example.com\\s+webhook`));

    const json = cli('messages', 'show', messageKey, '--json');
    expect(json.status).toBe(0);
    const parsed = JSON.parse(json.stdout) as { message: { arrivals: number; operations: string[] }; operations: Array<{ operationKey: string; status: string }> };
    expect(parsed.message).toMatchObject({ arrivals: 2, operations: [sentKey, deadKey].sort() });
    expect(parsed.operations.map((o) => [o.operationKey, o.status]).sort()).toEqual([[deadKey, 'dead'], [sentKey, 'sent']].sort());

    const missing = cli('messages', 'show', 'f'.repeat(64));
    expect(missing.status).toBe(4);
    expect(missing.stderr).toContain('no message with key');
  });

  it('has --json parity in ops show', () => {
    const json = cli('ops', 'show', deadKey, '--json');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ operation: { operationKey: deadKey, status: 'dead', reason: 'permanent' } });
  });
});

describe('singleshot queues', () => {
  it('prints jobs per queue and state, and the same as JSON', () => {
    const table = cli('queues');
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/QUEUE\s+WAITING\s+ACTIVE\s+DELAYED\s+PRIORITIZED\s+FAILED\s+COMPLETED\s+PAUSED/);
    expect(table.stdout).toMatch(/dead\s+1\s+0\s+0\s+0\s+0\s+0\s+no/);
    expect(table.stdout).toContain('1 dead operation(s)');
    const json = JSON.parse(cli('queues', '--json').stdout) as { queues: Array<{ queue: string; counts: Record<string, number>; paused: boolean }> };
    // Every queue the fleet uses, digest included, as the code names them.
    expect(json.queues.map((q) => q.queue)).toEqual(Object.values(QUEUES));
    expect(json.queues.map((q) => q.queue)).toContain('digest');
    for (const name of Object.values(QUEUES)) expect(table.stdout).toMatch(new RegExp(`^ +${name}( +\\d+){6} +(yes|no)$`, 'm'));
    expect(json.queues.find((q) => q.queue === 'dead')?.counts).toMatchObject({ waiting: 1, active: 0, failed: 0 });
    // The event's two operations travelled in one batch deliver job (delivery.batchMax).
    expect(json.queues.find((q) => q.queue === 'deliver')?.counts.completed).toBe(1);
    expect(json.queues.find((q) => q.queue === 'decide')?.counts.completed).toBe(1);
  });
});

describe('singleshot journal tail', () => {
  it('prints the newest entries, newest last, limited and filtered by --since', () => {
    const table = cli('journal', 'tail');
    expect(table.status, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/TIME\s+TYPE\s+OPERATION\s+RECIPIENT\s+DETAILS/);
    expect(lines.slice(1).map((l) => l.trim().split(/\s+/)[1]).sort()).toEqual(['dead', 'sent']);
    expect(table.stdout).toMatch(new RegExp(`sent\\s+${sentKey}\\s+ok@example.com webhook\\s+.*provider=primary`));

    const json = cli('journal', 'tail', '--json', '--limit', '1');
    const entries = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; fields: Record<string, string> });
    expect(entries).toHaveLength(1);
    const all = cli('journal', 'tail', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string });
    expect(all).toHaveLength(2);
    // --limit keeps the newest.
    expect((entries[0] as unknown as { id: string }).id).toBe(all[1]?.id);

    expect(cli('journal', 'tail', '--since', '1h', '--json').stdout.trim().split('\n')).toHaveLength(2);
    const future = cli('journal', 'tail', '--since', new Date(Date.now() + 3_600_000).toISOString());
    expect([future.status, future.stdout, future.stderr.trim()]).toEqual([0, '', expect.stringContaining('no journal entries since')]);
    const bad = cli('journal', 'tail', '--since', 'last tuesday');
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('expected an ISO 8601 date-time');
  });

  it('--follow prints entries as they are written until interrupted', async () => {
    const child = spawn(process.execPath, [CLI_MAIN, 'journal', 'tail', '--follow', '--json', '--config', configFile], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    try {
      const entries = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; fields: Record<string, string> });
      await waitUntil(() => entries().length === 2, 'the existing entries');
      const newKey = operationKey({ messageKey: eventMessageKey('shop', 'evt-cli-follow'), action: parseAction('notify'), recipient: 'new@example.com', channel: 'webhook' });
      expect((await post('evt-cli-follow', ['new@example.com'])).status).toBe(202);
      await waitUntil(() => entries().some((e) => e.fields.op === newKey), 'the new entry to be followed', { timeoutMs: 30_000 });
      expect(entries().filter((e) => e.fields.op === newKey).map((e) => e.type)).toEqual(['sent']);
      expect(entries()).toHaveLength(3);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
