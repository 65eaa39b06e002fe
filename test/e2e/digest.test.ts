import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnApps, startHttpSink, startTestBackend, testConfig, waitUntil, writeConfigFile, type AppProcess, type HttpSink, type TestBackend } from '@singleshot/test-harness';
import { ingestClient } from './support/lifecycle';
import { appearances, digestRoute, sinkDigests } from './support/digests';

// Novu's reported digest bugs, each as the case that reproduced it, against
// real processes (ingest, decision, delivery), a real Redis and an HTTP sink.
describe('digests', () => {
  let redis: TestBackend;
  let sink: HttpSink;
  let apps: AppProcess;
  let cleanup: () => void;
  let client: ReturnType<typeof ingestClient>;

  beforeAll(async () => {
    redis = await startTestBackend();
    sink = await startHttpSink();
    const config = testConfig({
      ...redis.config,
      routes: [
        digestRoute('same_ms', 'ms', { window: '2s' }),
        digestRoute('keyed', 'keys', { window: '2s', key: '{{data.supplier}}' }),
        digestRoute('delayed', 'delay', { window: '2s' }, { delay: '3s' }),
        digestRoute('capped', 'max', { window: '8s', maxItems: 100 }),
        digestRoute('flaky', 'fail', { window: '2s' }),
      ],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 1500 }] },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    apps = spawnApps('ingest,decision,delivery', written.file);
    client = ingestClient(`http://127.0.0.1:${await apps.metricsPort()}`);
  });

  afterAll(async () => {
    await apps?.stop();
    await sink?.close();
    await redis?.destroy();
    cleanup?.();
  });

  const post = (source: string, id: string, recipient: string, data: Record<string, unknown> = {}) => client.event({ id, source, type: 'update', recipients: [recipient], data });
  const digestsFor = (recipient: string) => sinkDigests(sink).filter((d) => d.recipient === recipient);

  it('two events in the same millisecond (each posted 3 times at once) make one digest with both', async () => {
    await Promise.all(['ms-1', 'ms-2'].flatMap((id) => [0, 1, 2].map(() => post('ms', id, 'same@x.test'))));
    const [digest] = await sink.waitFor(() => (digestsFor('same@x.test').length > 0 ? digestsFor('same@x.test') : undefined), { timeoutMs: 20_000, what: 'the digest' });
    expect(digest?.ids.sort()).toEqual(['ms-1', 'ms-2']);
    expect(digest?.count).toBe(2);
    expect(digest?.accepted).toBe(1);
  });

  it('concurrent triggers with different keys make one digest per key, each with its own events', async () => {
    await Promise.all(['a', 'b', 'c'].flatMap((supplier) => [1, 2, 3].map((n) => post('keys', `k-${supplier}-${n}`, 'keys@x.test', { supplier }))));
    const digests = await sink.waitFor(() => (digestsFor('keys@x.test').length >= 3 ? digestsFor('keys@x.test') : undefined), { timeoutMs: 20_000, what: 'three digests' });
    expect(digests.map((d) => d.key).sort()).toEqual(['a', 'b', 'c']);
    for (const d of digests) expect(d.ids.sort()).toEqual([1, 2, 3].map((n) => `k-${d.key}-${n}`));
  });

  it('a delay before a digest makes one digest, not one per event, sent no earlier than the latest member is due', async () => {
    const posted = Date.now();
    await Promise.all([1, 2, 3, 4, 5].map((n) => post('delay', `d-${n}`, 'delay@x.test')));
    const digests = await sink.waitFor(() => (digestsFor('delay@x.test').length > 0 ? digestsFor('delay@x.test') : undefined), { timeoutMs: 20_000, what: 'the delayed digest' });
    expect(digests).toHaveLength(1);
    expect(digests[0]?.ids.sort()).toEqual(['d-1', 'd-2', 'd-3', 'd-4', 'd-5']);
    const request = sink.requests.find((r) => r.idempotencyKey === digests[0]?.operationKey);
    expect(request?.receivedAt).toBeGreaterThanOrEqual(posted + 3_000);
  });

  it('a digest whose flush fails twice (503, 503) and then succeeds is sent once, with the same items in the same order', async () => {
    sink.scriptFor('flaky@x.test', { status: 503 }, { status: 503 });
    for (const n of [1, 2, 3, 4]) await post('fail', `f-${n}`, 'flaky@x.test');
    const [digest] = await sink.waitFor(() => (digestsFor('flaky@x.test').length > 0 ? digestsFor('flaky@x.test') : undefined), { timeoutMs: 20_000, what: 'the flaky digest' });
    const posts = sink.requests.filter((r) => r.idempotencyKey === digest?.operationKey);
    expect(posts).toHaveLength(3);
    const orders = posts.map((p) => (p.body as { data: { items: Array<{ id: string }> } }).data.items.map((i) => i.id));
    expect(orders[0]).toEqual(['f-1', 'f-2', 'f-3', 'f-4']);
    expect(new Set(orders.map((o) => o.join(','))).size).toBe(1);
    expect(digest?.accepted).toBe(1);
  });

  it('maxItems: 250 events against maxItems 100 make digests of 100, 100 and 50, each sent once', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `max-${i}`);
    await Promise.all(ids.map((id) => post('max', id, 'max@x.test')));
    const digests = await sink.waitFor(() => (digestsFor('max@x.test').reduce((n, d) => n + d.ids.length, 0) >= 250 ? digestsFor('max@x.test') : undefined), { timeoutMs: 30_000, what: 'all 250 items' });
    expect(digests.map((d) => d.ids.length).sort((a, b) => b - a)).toEqual([100, 100, 50]);
    for (const d of digests) expect(d.accepted).toBe(1);
    const seen = appearances(digests);
    expect(ids.filter((id) => seen.get(id) !== 1)).toEqual([]);
    // Counted once per member and per flush, however often the scripts ran.
    expect(await apps.metric('singleshot_digest_items_total', { route: 'capped' })).toBe(250);
    await waitUntil(async () => (await apps.metric('singleshot_digests_flushed_total', { reason: 'max_items' })) === 2, 'two max_items flushes counted', { timeoutMs: 10_000 });
  });

  it('a cancel that comes before its event keeps the event out of its digest', async () => {
    const answer = await client.cancel({ source: 'ms', id: 'gone-1', reason: 'withdrawn' });
    expect(answer.pending).toBe(true);
    await Promise.all([post('ms', 'gone-1', 'cancel@x.test'), post('ms', 'kept-1', 'cancel@x.test')]);
    const [digest] = await sink.waitFor(() => (digestsFor('cancel@x.test').length > 0 ? digestsFor('cancel@x.test') : undefined), { timeoutMs: 20_000, what: 'the digest' });
    expect(digest?.ids).toEqual(['kept-1']);
  });

  it('events after a close open the next window; none is in two digests', async () => {
    await post('ms', 'late-1', 'late@x.test');
    await sink.waitFor(() => digestsFor('late@x.test').length === 1 || undefined, { timeoutMs: 20_000, what: 'the first window' });
    await post('ms', 'late-2', 'late@x.test');
    await post('ms', 'late-1', 'late@x.test');
    await waitUntil(() => digestsFor('late@x.test').length === 2, 'the second window', { timeoutMs: 20_000 });
    expect(digestsFor('late@x.test').map((d) => d.ids)).toEqual([['late-1'], ['late-2']]);
  });
});
