import { sha256Hex as sha } from '@singleshot/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRedis, waitUntil, type TestRedis } from '@singleshot/test-harness';
import { parseConfig } from '@singleshot/config';
import { createRuntime, type Runtime } from '@singleshot/runtime';
import { startIngest, type IngestApp } from './server';

let redis: TestRedis;
let rt: Runtime;
let ingest: IngestApp;
let base: string;

beforeAll(async () => {
  redis = await startTestRedis();
  const config = parseConfig({
    redis: { url: redis.url },
    log: { level: 'silent' },
    ingest: { enqueueTimeoutMs: 1_000 },
    mailboxes: [{ id: 'support', owner: 'owner@example.test' }],
  });
  rt = await createRuntime(config, { app: 'test' });
  ingest = await startIngest(rt, { port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${ingest.port}`;
});

afterAll(async () => {
  await ingest?.close();
  await rt?.close();
  await redis?.destroy();
});

async function postEvent(id: string) {
  const res = await fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, source: 'shop', type: 'order.created', recipients: ['a@example.com'] }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
}

describe('ingest while Redis is away', () => {
  it('answers 503 when Redis does not confirm within enqueueTimeoutMs, and a retry is deduplicated', async () => {
    // Writes (and scripts) wait for 3 s; the request gives up after 1 s.
    await rt.redis.call('CLIENT', 'PAUSE', '3000', 'WRITE');
    const slow = await postEvent('slow-1');
    expect(slow.status).toBe(503);
    expect(slow.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
    // The write went through once Redis resumed: the retry finds it, and nothing is queued twice.
    const retried = await waitUntil(
      async () => {
        const answer = await postEvent('slow-1');
        return answer.status === 202 ? answer : undefined;
      },
      'the retry to be answered 202',
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(retried.body.messageKey).toBe(sha('shop:slow-1'));
    expect(['accepted', 'duplicate']).toContain(retried.body.status);
    expect(await rt.queues.decide.getJob(sha('shop:slow-1'))).toBeDefined();
    expect(await rt.queues.decide.count()).toBe(1);
  });

  it('answers 503 STORE_UNAVAILABLE with Retry-After, never 2xx, and recovers after a restart', async () => {
    expect((await postEvent('before')).status).toBe(202);

    await redis.stop();
    for (const id of ['down-1', 'down-2', 'before']) {
      const answer = await postEvent(id);
      expect(answer.status, id).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(answer.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
    }
    const mail = await fetch(`${base}/v1/mail/inbound?mailbox=support`, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822' },
      body: 'From: a@example.com\r\nMessage-ID: <down@example.com>\r\n\r\nbody\r\n',
    });
    expect(mail.status).toBe(503);
    await mail.body?.cancel();
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unavailable' });
    // Liveness does not depend on Redis: restarting the process would not help.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    await redis.restart();
    // The event refused while Redis was down was never kept: its retry is accepted.
    const retried = await waitUntil(
      async () => {
        const answer = await postEvent('down-1');
        expect(answer.status === 202 || answer.status === 503).toBe(true);
        return answer.status === 202 ? answer : undefined;
      },
      'ingest to accept again after the Redis restart',
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(retried.body).toEqual({ messageKey: sha('shop:down-1'), status: 'accepted' });
    expect(await rt.queues.decide.getJob(sha('shop:down-1'))).toBeDefined();
    // What was kept before the outage survived it (AOF), so it stays a duplicate.
    expect((await postEvent('before')).body).toEqual({ messageKey: sha('shop:before'), status: 'duplicate' });
    await waitUntil(async () => (await fetch(`${base}/readyz`)).status === 200, 'readyz 200 again', { timeoutMs: 30_000, intervalMs: 200 });
  });
});
