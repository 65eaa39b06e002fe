import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { DeliverJobData } from '@singleshot/core';
import { enqueueDeliveries } from '@singleshot/queues';
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
import { deliverJob } from '@singleshot/test-jobs';

// Per-recipient limits in a real delivery process: the (N+1)th operation for a
// recipient within the window ends `suppressed`, journaled and counted, is listed
// by `singleshot dlq list --suppressed`, and a replay sends it (once).
const run = promisify(execFile);
const MAX = 2;
let redis: TestRedis;
let sink: HttpSink;
let rt: Runtime;
let fleet: AppProcess;
let configFile: string;
let cleanup: () => void;

function job(name: string, recipient: string, route = 'test'): DeliverJobData {
  return deliverJob(name, { recipient, route });
}
const status = async (key: string) => (await rt.operations.get(key))?.status;
const settled = async (keys: string[]) => {
  const all = await Promise.all(keys.map(status));
  return all.every((s) => s === 'sent' || s === 'suppressed') ? all : undefined;
};

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 3, backoffMs: [50], concurrency: 1, metricsPort: 0 },
    limits: { perRecipient: { max: MAX, windowSeconds: 3600 } },
    routes: [
      { name: 'test', match: {}, action: 'notify', channel: 'webhook' },
      { name: 'alerts', match: { type: 'alert' }, action: 'alert', channel: 'webhook', limit: { max: 1, windowSeconds: 3600 } },
    ],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 5000 }] },
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  rt = await testRuntime(config);
  fleet = spawnApps('delivery', configFile);
  await fleet.metricsPort();
});

afterAll(async () => {
  await fleet?.stop();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  cleanup?.();
});

describe('per-recipient limits', () => {
  it(`lets ${MAX} operations per recipient through, suppresses the next one (journaled, counted), and a replay sends it`, async () => {
    const jobs = Array.from({ length: MAX + 1 }, (_, i) => job(`limited-${i}`, 'busy@example.com'));
    const other = job('other', 'calm@example.com');
    // One after the other, so which one is over the limit is known.
    for (const data of jobs) {
      await enqueueDeliveries(rt.queues, [data]);
      await waitUntil(() => settled([data.operationKey]), `${data.subject} to settle`, { timeoutMs: 60_000 });
    }
    await enqueueDeliveries(rt.queues, [other]);
    await waitUntil(() => settled([other.operationKey]), 'the other recipient', { timeoutMs: 60_000 });

    const over = jobs[MAX] as DeliverJobData;
    expect(await Promise.all(jobs.map((j) => status(j.operationKey)))).toEqual(['sent', 'sent', 'suppressed']);
    expect(await status(other.operationKey)).toBe('sent');
    expect(sink.countFor(over.operationKey)).toBe(0);
    const record = await rt.operations.get(over.operationKey);
    expect(record).toMatchObject({ reason: 'rate_limit', lastErrorCode: 'RATE_LIMIT' });
    const entries = await rt.journal.forOperation(over.operationKey, record?.journalIds ?? []);
    expect(entries.map((e) => [e.type, e.fields.reason])).toEqual([['suppressed', 'rate_limit']]);
    expect(await fleet.metric('singleshot_suppressed_total', { reason: 'rate_limit' })).toBe(1);
    expect(await fleet.metric('singleshot_deliveries_total', { result: 'suppressed' })).toBe(1);

    // Redelivered: still suppressed, still not sent, not counted twice.
    await rt.queues.deliver.add('deliver', over, { jobId: `${over.operationKey}-again` });
    await waitUntil(async () => (await (await rt.queues.deliver.getJob(`${over.operationKey}-again`))?.isCompleted()) === true, 'the redelivered job');
    expect(await status(over.operationKey)).toBe('suppressed');
    expect(await fleet.metric('singleshot_suppressed_total', { reason: 'rate_limit' })).toBe(1);

    const cli = (...args: string[]) => run(process.execPath, [CLI_MAIN, 'dlq', ...args, '--config', configFile], { cwd: REPO_ROOT });
    const listed = JSON.parse((await cli('list', '--suppressed', '--json')).stdout) as { suppressed: { operationKey: string; reason: string; recipient: string }[] };
    expect(listed.suppressed).toEqual([expect.objectContaining({ operationKey: over.operationKey, reason: 'rate_limit', recipient: 'busy@example.com' })]);

    // An operator releases it: it skips the limit once and is sent, once.
    const replayed = await cli('replay', over.operationKey, '--by', 'dana');
    expect(replayed.stdout).toMatch(/replayed/);
    await waitUntil(async () => (await status(over.operationKey)) === 'sent', 'the replayed suppression to be sent', { timeoutMs: 60_000 });
    expect(sink.accepted.get(over.operationKey)?.count).toBe(1);
    const after = await rt.operations.get(over.operationKey);
    const types = (await rt.journal.forOperation(over.operationKey, after?.journalIds ?? [])).map((e) => [e.type, e.fields.by ?? '']);
    expect(types).toEqual([['suppressed', ''], ['replayed', 'dana'], ['sent', '']]);
    expect(JSON.parse((await cli('list', '--suppressed', '--json')).stdout)).toEqual({ suppressed: [] });

    // The limit still holds for the next new operation.
    const next = job('limited-next', 'busy@example.com');
    await enqueueDeliveries(rt.queues, [next]);
    await waitUntil(() => settled([next.operationKey]), 'the next operation', { timeoutMs: 60_000 });
    expect(await status(next.operationKey)).toBe('suppressed');
  });

  it("a route's own limit applies on top of the global one", async () => {
    const first = job('alert-1', 'ops@example.com', 'alerts');
    const second = job('alert-2', 'ops@example.com', 'alerts');
    const plain = job('plain-1', 'ops@example.com');
    for (const data of [first, second, plain]) {
      await enqueueDeliveries(rt.queues, [data]);
      await waitUntil(() => settled([data.operationKey]), `${data.subject} to settle`, { timeoutMs: 60_000 });
    }
    expect([await status(first.operationKey), await status(second.operationKey), await status(plain.operationKey)]).toEqual(['sent', 'suppressed', 'sent']);
  });
});
