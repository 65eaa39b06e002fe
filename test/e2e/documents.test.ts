import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { join } from 'node:path';
import { parseConfig } from '@singleshot/config';
import { documentKey } from '@singleshot/core';
import { startDashboard, type Dashboard } from '@singleshot/dashboard';
import { startDecision, type DecisionApp } from '@singleshot/decision';
import { startDelivery, type DeliveryApp } from '@singleshot/delivery';
import { FsDocumentStore, type DocumentStore } from '@singleshot/documents';
import { startIngest, type IngestApp } from '@singleshot/ingest';
import { replayMany } from '@singleshot/queues';
import { startRender, type RenderApp } from '@singleshot/render';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startSmtpSink, startTestRedis, testConfig, waitUntil, type SmtpSink, type TestRedis } from '@singleshot/test-harness';
import { attachmentsFor, orderEvent, recipients, sha, templateDir } from './support/documents';

// Documents end to end in one process (ingest → decision → render → delivery),
// against a real Redis, a real SMTP sink and the filesystem store; the store
// is wrapped so a test can make generation fail, or hold it.
let redis: TestRedis;
let sink: SmtpSink;
let rt: Runtime;
let apps: { ingest: IngestApp; decision: DecisionApp; render: RenderApp; delivery: DeliveryApp; dashboard: Dashboard };
let tpl: ReturnType<typeof templateDir>;
let fs: FsDocumentStore;
const DASHBOARD_TOKEN = 'documents-test-dashboard-token';
const faults = { failures: 0, broken: false, puts: 0, hold: undefined as Promise<void> | undefined };

const store: DocumentStore = {
  describe: 'test',
  put: async (key, bytes, type) => {
    faults.puts += 1;
    await faults.hold;
    if (faults.broken || faults.failures > 0) {
      faults.failures = Math.max(0, faults.failures - 1);
      throw Object.assign(new Error('disk on fire'), { code: 'EIO' });
    }
    await fs.put(key, bytes, type);
  },
  get: (key) => fs.get(key),
  exists: (key) => fs.exists(key),
  delete: (key) => fs.delete(key),
  close: async () => undefined,
};

async function post(event: Record<string, unknown>): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${apps.ingest.port}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
  expect(res.status).toBe(202);
  return ((await res.json()) as { messageKey: string }).messageKey;
}

async function operationsOf(messageKey: string): Promise<string[]> {
  return waitUntil(async () => {
    const m = await rt.messages.get(messageKey);
    return m && m.operations.length === 10 ? m.operations : undefined;
  }, 'the decision');
}

const statuses = async (keys: string[]) => Promise.all(keys.map(async (k) => (await rt.operations.get(k))?.status));
const documentOf = async (messageKey: string) => documentKey({ messageKey, name: 'purchase-order', version: 'v1' });

async function gauge(name: string, labels: Record<string, string>): Promise<number> {
  const metric = await rt.metrics.registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value ?? 0;
}

beforeAll(async () => {
  redis = await startTestRedis();
  sink = await startSmtpSink();
  tpl = templateDir();
  fs = new FsDocumentStore(join(tpl.dir, 'documents'));
  const config = parseConfig(
    testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: 5000, attempts: 3, backoffMs: [100], concurrency: 8, metricsPort: 0 },
      dashboard: { auth: { token: DASHBOARD_TOKEN } },
      routes: [
        {
          name: 'orders',
          match: { source: 'shop', type: 'order.created' },
          action: 'notify',
          channel: 'email',
          template: { subject: 'Purchase order {{data.orderId}}', text: 'Order {{data.orderId}} from {{data.supplier}} is attached.', html: '<p>Order <b>{{data.orderId}}</b> from {{data.supplier}}</p>' },
          documents: [{ name: 'purchase-order', template: tpl.template, fileName: 'PO-{{data.orderId}}.pdf' }],
        },
        { name: 'shipped', match: { source: 'shop', type: 'order.shipped' }, action: 'notify', channel: 'email', template: { subject: 'Shipped {{data.orderId}}', text: 'On its way.' } },
      ],
      providers: { email: [{ name: 'relay', type: 'smtp', host: '127.0.0.1', port: sink.port, secure: false, from: 'orders@example.test' }] },
      documents: { store: { type: 'fs', dir: join(tpl.dir, 'documents') }, attempts: 3, backoffMs: [100], leaseMs: 5000, waitPollMs: 300 },
    }),
  );
  rt = await createRuntime(config, { app: 'documents-e2e' });
  const delivery = startDelivery(rt);
  const render = startRender(rt, { store });
  const decision = startDecision(rt);
  const ingest = await startIngest(rt, { port: 0, pollers: false });
  const dashboard = await startDashboard(rt, { port: 0, host: '127.0.0.1' });
  apps = { ingest, decision, render, delivery, dashboard };
});

afterAll(async () => {
  await apps?.dashboard.close();
  await apps?.ingest.close();
  await apps?.decision.close();
  await apps?.render.close();
  await apps?.delivery.close();
  await rt?.close();
  await sink?.close();
  await redis?.destroy();
  tpl?.cleanup();
});

describe('documents end to end', () => {
  it('one event for 10 recipients with a PDF: waits visibly, one generation, 10 emails with the same attachment', async () => {
    let release!: () => void;
    faults.hold = new Promise<void>((r) => (release = r));
    onTestFinished(() => {
      release();
      faults.hold = undefined;
    });
    faults.puts = 0;
    const to = recipients('one');
    const messageKey = await post(orderEvent('PO-1', to));
    const ops = await operationsOf(messageKey);
    // Generation is held: every operation is marked waiting for its document, none has used an attempt.
    await waitUntil(async () => (await rt.documents.waitingCount()) === 10, 'ten operations marked waiting');
    for (const key of ops) {
      const op = await rt.operations.get(key);
      expect(op).toMatchObject({ status: 'pending', waitingFor: 'document:purchase-order', attempts: 0 });
    }
    expect(await gauge('singleshot_operations_waiting', { reason: 'document' })).toBe(10);
    // The dashboard lists them, and the document they wait for.
    const admin = async (path: string) =>
      (await fetch(`http://127.0.0.1:${apps.dashboard.port}/admin/api${path}`, { headers: { authorization: `Bearer ${DASHBOARD_TOKEN}` } })).json() as Promise<Record<string, unknown>>;
    const listed = (await admin('/waiting')).waiting as { operationKey: string; waitingFor: string; status: string }[];
    expect(listed.map((w) => w.operationKey).sort()).toEqual([...ops].sort());
    expect(new Set(listed.map((w) => `${w.status} ${w.waitingFor}`))).toEqual(new Set(['pending document:purchase-order']));
    expect((await admin(`/documents/${await documentOf(messageKey)}`)).document).toMatchObject({ status: 'rendering', attempts: 1 });
    expect(sink.taken()).toHaveLength(0);
    // A notification that needs no document is not held up by the one being generated.
    await post({ id: 'ship-1', source: 'shop', type: 'order.shipped', recipients: ['someone@example.test'], data: { orderId: 'PO-1' } });
    await waitUntil(() => sink.taken().some((m) => m.envelope.to.includes('someone@example.test')), 'the shipping email, while the document is still held');
    expect((await rt.documents.get(await documentOf(messageKey)))?.status).toBe('rendering');
    release();
    faults.hold = undefined;

    await waitUntil(async () => (await statuses(ops)).every((s) => s === 'sent'), 'ten emails sent');
    const doc = await rt.documents.get(await documentOf(messageKey));
    expect(doc).toMatchObject({ status: 'stored', attempts: 1 });
    expect(faults.puts).toBe(1);
    for (const r of to) {
      const attachments = await attachmentsFor(sink, r);
      expect(attachments, r).toEqual([{ fileName: 'PO-PO-1.pdf', checksum: doc?.stored?.checksum, html: true }]);
    }
    expect(sink.taken().filter((m) => to.some((r) => m.envelope.to.includes(r)))).toHaveLength(10);
    expect(sha((await fs.get(doc?.stored?.storeKey as string)) as Buffer)).toBe(doc?.stored?.checksum);
    expect(await rt.documents.waitingCount()).toBe(0);
    for (const key of ops) expect((await rt.operations.get(key))?.waitingFor).toBeUndefined();
  });

  it('generation failing twice, then succeeding: each email sent once', async () => {
    faults.failures = 2;
    faults.puts = 0;
    const to = recipients('flaky');
    const messageKey = await post(orderEvent('PO-2', to));
    const ops = await operationsOf(messageKey);
    await waitUntil(async () => (await statuses(ops)).every((s) => s === 'sent'), 'ten emails sent');
    const doc = await rt.documents.get(await documentOf(messageKey));
    expect(doc).toMatchObject({ status: 'stored', attempts: 3 });
    expect(faults.puts).toBe(3);
    for (const r of to) expect(await attachmentsFor(sink, r), r).toEqual([{ fileName: 'PO-PO-2.pdf', checksum: doc?.stored?.checksum, html: true }]);
    // Waiting used none of the deliveries' attempts.
    for (const key of ops) expect((await rt.operations.get(key))?.attempts).toBe(1);
  });

  it('failing for good: 10 operations dead with document_failed in the DLQ; a replay after the fix generates once and sends each once', async () => {
    faults.broken = true;
    faults.puts = 0;
    const to = recipients('broken');
    const messageKey = await post(orderEvent('PO-3', to));
    const ops = await operationsOf(messageKey);
    await waitUntil(async () => (await statuses(ops)).every((s) => s === 'dead'), 'ten operations dead', { timeoutMs: 60_000 });
    expect(faults.puts).toBe(3);
    for (const key of ops) {
      expect(await rt.operations.get(key)).toMatchObject({ status: 'dead', reason: 'document_failed', lastErrorCode: 'DOCUMENT_FAILED' });
      const record = await waitUntil(() => rt.queues.dead.getJob(key), `DLQ record of ${key}`);
      expect(record.data).toMatchObject({ reason: 'document_failed', error: { code: 'DOCUMENT_FAILED' } });
    }
    expect(await rt.documents.waitingCount()).toBe(0);
    for (const r of to) expect(sink.taken().filter((m) => m.envelope.to.includes(r))).toHaveLength(0);

    faults.broken = false;
    faults.puts = 0;
    const results = await replayMany(ops, { by: 'alice', via: 'cli' }, rt);
    expect(results.map((r) => r.result)).toEqual(Array(10).fill('replayed'));
    await waitUntil(async () => (await statuses(ops)).every((s) => s === 'sent'), 'ten emails sent after the replay', { timeoutMs: 60_000 });
    const doc = await rt.documents.get(await documentOf(messageKey));
    expect(doc).toMatchObject({ status: 'stored', replays: 1 });
    expect(faults.puts).toBe(1);
    for (const r of to) expect(await attachmentsFor(sink, r), r).toEqual([{ fileName: 'PO-PO-3.pdf', checksum: doc?.stored?.checksum, html: true }]);
    const journal = await rt.journal.forOperation(doc?.documentKey as string, doc?.journalIds ?? []);
    expect(journal.map((e) => e.type)).toEqual(['document_failed', 'document_replayed', 'document_stored']);
    expect(journal[2]?.fields).toMatchObject({ checksum: doc?.stored?.checksum });
    expect(await rt.queues.dead.getJobCounts('waiting')).toMatchObject({ waiting: 0 });
  });
});
