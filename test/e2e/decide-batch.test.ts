import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { DECIDE_BATCH_JOB_NAME, DELIVER_BATCH_JOB_NAME } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startTestBackend,
  testBackendKind,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestBackend,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Batch decide jobs, end to end with the real apps as processes: the first
// arrivals that ingest takes in one event-loop turn share a `batch` decide
// job, and the fan-outs decided together share `batch` deliver jobs. Each
// message is still accepted once, decided once, and each operation sent once.
describe(`batch decide jobs (${testBackendKind()} Redis)`, () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const config = testConfig({
      ...redis.config,
      routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (body: unknown) =>
    fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('60 events posted 3 times at once: batched decisions, one accepted answer, one send per operation', async () => {
    const events = Array.from({ length: 60 }, (_, i) => ({ id: `evt-b-${i}`, source: 'shop', type: 'order.created', recipients: [`a${i}@example.com`, `b${i}@example.com`], data: { orderId: `o-${i}` } }));
    const answers = await Promise.all(events.flatMap((e) => [post(e), post(e), post(e)]));
    expect(answers.map((r) => r.status)).toEqual(Array(180).fill(202));
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ status: string; messageKey: string }>));
    for (const e of events) {
      const key = eventMessageKey('shop', e.id);
      const mine = bodies.filter((b) => b.messageKey === key);
      expect(mine.map((b) => b.status).sort(), e.id).toEqual(['accepted', 'duplicate', 'duplicate']);
    }
    const ops = events.flatMap((e) =>
      e.recipients.map((recipient) => operationKey({ messageKey: eventMessageKey('shop', e.id), action: parseAction('notify'), recipient, channel: 'webhook' })),
    );
    await sink.waitFor((s) => ops.every((k) => s.accepted.has(k)), { timeoutMs: 60_000, what: '120 notifications' });
    await waitUntil(async () => (await Promise.all([...rt.queues.decideAll, ...rt.queues.deliverAll].map((q) => q.getJobCounts('waiting', 'active', 'delayed')))).every((c) => (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) === 0), 'queues to drain');
    expect(ops.map((k) => sink.countFor(k))).toEqual(Array(120).fill(1));
    expect(sink.requests).toHaveLength(120);

    // Every message decided once, with both its operations recorded.
    for (const e of events) {
      const record = await rt.messages.get(eventMessageKey('shop', e.id));
      expect(record?.decidedAt, e.id).toBeDefined();
      expect(record?.operations, e.id).toHaveLength(2);
    }
    const decideJobs = (await Promise.all(rt.queues.decideAll.map((q) => q.getJobs(['completed'])))).flat();
    const decidedInJobs = decideJobs.reduce((n, j) => n + (j.name === DECIDE_BATCH_JOB_NAME ? (j.data as unknown as { messages: unknown[] }).messages.length : 1), 0);
    expect(decidedInJobs).toBe(60);
    if (testBackendKind() === 'single') {
      // 180 requests at once reach ingest many to a turn: decide jobs were
      // shared, and so were deliver jobs across messages. (On a cluster the 60
      // messages spread over 16 decide partitions, and the arrivals' replies
      // come from three masters in turns of their own: a batch forms only when
      // one partition gets several first arrivals in one turn, which this small
      // run need not show. The sends above are what must hold there.)
      expect(decideJobs.filter((j) => j.name === DECIDE_BATCH_JOB_NAME).length).toBeGreaterThan(0);
      expect(decideJobs.length).toBeLessThan(60);
      const deliverBatches = (await Promise.all(rt.queues.deliverAll.map((q) => q.getJobs(['completed'])))).flat().filter((j) => j.name === DELIVER_BATCH_JOB_NAME);
      const messagesPerBatch = deliverBatches.map((j) => new Set((j.data as unknown as { operations: Array<{ messageKey: string }> }).operations.map((o) => o.messageKey)).size);
      expect(Math.max(...messagesPerBatch)).toBeGreaterThan(1);
    }
    expect(await fleet.metric('singleshot_duplicates_suppressed_total', { stage: 'decision' })).toBe(0);
  });
});
