import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { documentKey, type RenderJobData } from '@singleshot/core';
import { FsDocumentStore, type DocumentStore } from '@singleshot/documents';
import { enqueueRenders } from '@singleshot/queues';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { parseConfig } from '@singleshot/config';
import { startTestRedis, testConfig, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { startRender, type RenderApp } from './worker';

// The render operation against a real Redis and the real filesystem store: its
// own attempts and backoff, a dead document after the last attempt, the
// checksum in the journal, and a second run of the same job renders nothing.
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
let redis: TestRedis;
let rt: Runtime;
let app: RenderApp;
let dir: string;
let fs: FsDocumentStore;
/** Puts fail while `failures` > 0 (one per put), or always while `broken`. */
const faults = { failures: 0, broken: false, puts: 0 };

const flaky: DocumentStore = {
  describe: 'flaky',
  put: async (key, bytes, type) => {
    faults.puts += 1;
    if (faults.broken || faults.failures > 0) {
      faults.failures = Math.max(0, faults.failures - 1);
      throw Object.assign(new Error('disk on fire'), { code: 'DOCUMENT_STORE' });
    }
    await fs.put(key, bytes, type);
  },
  get: (key) => fs.get(key),
  exists: (key) => fs.exists(key),
  delete: (key) => fs.delete(key),
  close: async () => undefined,
};

function job(id: string): RenderJobData {
  const messageKey = sha(`shop:${id}`);
  return {
    documentKey: documentKey({ messageKey, name: 'po', version: 'v1' }),
    messageKey,
    route: 'orders',
    name: 'po',
    version: 'v1',
    format: 'pdf',
    context: { id, data: { orderId: id, items: [{ sku: 'bolt', qty: 3, price: 0.5 }] } },
    createdAt: Date.parse('2026-02-03T04:05:06Z'),
    dependents: [],
  };
}

beforeAll(async () => {
  redis = await startTestRedis();
  dir = mkdtempSync(join(tmpdir(), 'ss-render-'));
  const template = join(dir, 'po.hbs');
  writeFileSync(template, '# Purchase order {{data.orderId}}\n| SKU | Qty |\n|---|---|\n{{#each data.items}}| {{sku}} | {{qty}} |\n{{/each}}Total {{money (sum data.items "price") "EUR"}}\n');
  fs = new FsDocumentStore(join(dir, 'store'));
  rt = await createRuntime(
    parseConfig(testConfig({
      redisUrl: redis.url,
      routes: [{ name: 'orders', match: {}, action: 'notify', channel: 'log', documents: [{ name: 'po', template, fileName: 'PO {{data.orderId}}.pdf' }] }],
      providers: { log: [{ name: 'log', type: 'log', path: join(dir, 'log.ndjson') }] },
      documents: { store: { type: 'fs', dir: join(dir, 'store') }, attempts: 3, backoffMs: [50], leaseMs: 2000 },
    })),
    { app: 'render-test' },
  );
  app = startRender(rt, { store: flaky });
});

afterAll(async () => {
  await app?.close();
  await rt?.close();
  await redis?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const settled = (key: string) => waitUntil(async () => {
  const doc = await rt.documents.get(key);
  return doc && (doc.status === 'stored' || doc.status === 'dead') ? doc : undefined;
}, 'the document to settle', { timeoutMs: 30_000 });

describe('render worker', () => {
  it('generation failing twice, then succeeding: stored on the third attempt, checksum journaled', async () => {
    faults.failures = 2;
    faults.puts = 0;
    const data = job('o-1');
    await enqueueRenders(rt.queues.render, [data]);
    const doc = await settled(data.documentKey);
    expect(doc.status).toBe('stored');
    expect(doc.attempts).toBe(3);
    expect(faults.puts).toBe(3);
    expect(doc.stored?.storeKey).toBe(`${data.documentKey}/po-o-1.pdf`);
    const bytes = (await fs.get(doc.stored?.storeKey as string)) as Buffer;
    expect(sha(bytes)).toBe(doc.stored?.checksum);
    expect(bytes.toString('latin1')).toContain('D:20260203040506Z');
    const entries = await rt.journal.forOperation(data.documentKey, doc.journalIds);
    expect(entries.map((e) => e.type)).toEqual(['document_stored']);
    expect(entries[0]?.fields).toMatchObject({ checksum: doc.stored?.checksum, doc: data.documentKey, name: 'po' });
  });

  it('the same job again (a redelivered decision) generates nothing', async () => {
    const data = job('o-1');
    faults.puts = 0;
    await enqueueRenders(rt.queues.render, [data], 1);
    await waitUntil(async () => (await rt.queues.render.getJob(`${data.documentKey}-r1`))?.returnvalue, 'the job to complete');
    expect((await rt.queues.render.getJob(`${data.documentKey}-r1`))?.returnvalue).toMatchObject({ kind: 'stored', duplicate: true });
    expect(faults.puts).toBe(0);
  });

  it('failing for good: dead after its last attempt, a replay renders it once', async () => {
    faults.broken = true;
    faults.puts = 0;
    const data = job('o-2');
    await enqueueRenders(rt.queues.render, [data]);
    const doc = await settled(data.documentKey);
    expect(doc).toMatchObject({ status: 'dead', attempts: 3, lastErrorCode: 'DOCUMENT_STORE' });
    expect(faults.puts).toBe(3);
    faults.broken = false;
    const replayed = await rt.documents.replay(data.documentKey, 'alice');
    expect(replayed?.round).toBe(1);
    expect(replayed).not.toBeNull();
    expect(await rt.documents.replay(data.documentKey, 'bob')).toBeNull(); // the second replay finds it pending
    await enqueueRenders(rt.queues.render, [JSON.parse(replayed?.job as string) as RenderJobData], replayed?.round);
    const again = await settled(data.documentKey);
    expect(again.status).toBe('stored');
    expect(faults.puts).toBe(4);
    const types = (await rt.journal.forOperation(data.documentKey, again.journalIds)).map((e) => e.type);
    expect(types).toEqual(['document_failed', 'document_replayed', 'document_stored']);
  });
});
