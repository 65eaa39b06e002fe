import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { MemoryDeliveryStore, SendRejectedError, createClient, lookupDelivery, verifyDelivery, type RetryInfo } from '@singleshot/client';
import type { Runtime } from '@singleshot/runtime';
import { spawnApps, startTestRedis, testConfig, waitForQueuesIdle, waitUntil, writeConfigFile, type AppProcess, type TestRedis } from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// @singleshot/client against a real fleet (ingest, decision, delivery on a real
// Redis), and its verifyDelivery as the receiver of the fleet's http provider.
const SECRET = 'client-test-secret-0123456789';
const SHOP_KEY = 'client-shop-key-0123456789abcdef';
const SLOW_KEY = 'client-slow-key-0123456789abcdef';

/** An http provider receiver built with verifyDelivery: counts what it acts on; can lose its first answer. */
async function startReceiver() {
  const store = new MemoryDeliveryStore();
  const effects: string[] = [];
  const requests: string[] = [];
  const loseAnswer = new Set<string>();
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && req.url?.startsWith('/messages/')) {
          const found = await lookupDelivery(store, decodeURIComponent(req.url.slice('/messages/'.length)));
          res.writeHead(found.status, { 'content-type': 'application/json' });
          return res.end(JSON.stringify('body' in found ? found.body : { error: 'not found' }));
        }
        const verified = await verifyDelivery({ headers: req.headers, body: Buffer.concat(chunks) }, { store });
        requests.push(verified.delivery.operationKey);
        if (verified.kind === 'in_progress') return res.writeHead(409).end();
        const id = verified.kind === 'duplicate' ? verified.id : `rcpt-${++n}`;
        if (verified.kind === 'new') {
          effects.push(verified.delivery.operationKey);
          await verified.commit(id);
        }
        if (loseAnswer.delete(verified.delivery.operationKey)) return void req.socket.destroy();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/send`,
    effects,
    requests,
    loseAnswerFor: (key: string) => void loseAnswer.add(key),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('@singleshot/client against a real fleet', () => {
  let redis: TestRedis;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let fleet: AppProcess;
  let anonymous: AppProcess;
  let rt: Runtime;
  let base: string;
  const cleanups: Array<() => void> = [];

  beforeAll(async () => {
    redis = await startTestRedis();
    receiver = await startReceiver();
    const shared = {
      redisUrl: redis.url,
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
      providers: { webhook: [{ name: 'receiver', type: 'http', url: receiver.url, timeoutMs: 2000 }] },
    };
    const signed = writeConfigFile(
      testConfig({
        ...shared,
        ingest: {
          port: 0,
          host: '127.0.0.1',
          signingSecrets: [SECRET],
          apiKeys: [
            { name: 'shop', key: SHOP_KEY, sources: ['shop'] },
            { name: 'slow', key: SLOW_KEY, sources: ['shop'], rateLimit: { perSecond: 1, burst: 1 } },
          ],
          enqueueTimeoutMs: 500,
        },
      }),
    );
    const open = writeConfigFile(testConfig(shared));
    cleanups.push(signed.cleanup, open.cleanup);
    fleet = spawnApps('ingest,decision,delivery', signed.file);
    anonymous = spawnApps('ingest', open.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(testConfig(shared));
  });

  afterAll(async () => {
    await Promise.all([fleet?.stop(), anonymous?.stop()]);
    await rt?.close();
    await receiver?.close();
    await redis?.destroy();
    for (const c of cleanups) c();
  });

  const opKey = (id: string, recipient: string) =>
    operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'webhook' });
  const sent = async (key: string) => ((await rt.operations.get(key))?.status === 'sent' ? true : undefined);

  it('signed: a 503 while Redis is down is retried with the same id after Redis is back; one notification', async () => {
    await redis.stop();
    const retries: RetryInfo[] = [];
    let restarted: Promise<void> | undefined;
    const client = createClient({
      baseUrl: base,
      signingSecret: SECRET,
      deadlineMs: 60_000,
      backoff: { baseMs: 100, capMs: 500 },
      onRetry: (info) => {
        retries.push(info);
        // Bring Redis back after the first refusal: the next attempt lands.
        restarted ??= redis.restart();
      },
    });
    const event = { id: 'evt-503', source: 'shop', type: 'order.created', recipients: ['a@example.test'], data: { orderId: 'o-1' } };
    const result = await client.send(event);
    await restarted;
    expect(retries[0]?.status).toBe(503);
    expect(result.attempts).toBeGreaterThan(1);
    expect(result.messageKey).toBe(eventMessageKey('shop', 'evt-503'));

    const key = opKey('evt-503', 'a@example.test');
    await waitUntil(() => sent(key), 'the operation to be sent', { timeoutMs: 60_000 });
    // The same id once more (a producer re-sending after a crash): a duplicate, never a second notification.
    expect((await client.send(event)).status).toBe('duplicate');
    await waitForQueuesIdle(rt.queues);
    expect(receiver.effects.filter((k) => k === key)).toHaveLength(1);
  });

  it('signed: without the secret ingest answers 401, a final SendRejectedError', async () => {
    const err = await createClient({ baseUrl: base }).send({ id: 'evt-unsigned', source: 'shop', type: 'order.created' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendRejectedError);
    expect((err as SendRejectedError).status).toBe(401);
  });

  it('Bearer API key: accepted for its source, 403 SOURCE_NOT_ALLOWED for another, 401 for an unknown key', async () => {
    const keyed = createClient({ baseUrl: base, apiKey: SHOP_KEY });
    expect(await keyed.send({ id: 'evt-key', source: 'shop', type: 'order.created', recipients: ['k@example.test'] })).toMatchObject({ status: 'accepted', attempts: 1 });
    const forbidden = await keyed.send({ id: 'evt-key-2', source: 'billing', type: 'invoice.paid' }).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(SendRejectedError);
    expect(forbidden).toMatchObject({ status: 403, code: 'SOURCE_NOT_ALLOWED' });
    const unknown = await createClient({ baseUrl: base, apiKey: 'x'.repeat(32) }).send({ id: 'evt-key-3', source: 'shop', type: 't' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 401 });
  });

  it('Bearer API key over its rate limit: the 429 is retried after Retry-After with the same id', async () => {
    const retries: RetryInfo[] = [];
    const slow = createClient({ baseUrl: base, apiKey: SLOW_KEY, deadlineMs: 30_000, backoff: { baseMs: 50, capMs: 100 }, onRetry: (i) => retries.push(i) });
    // Burst 1: of three sent together, at least two meet the limit and wait.
    const results = await Promise.all(['evt-slow-1', 'evt-slow-2', 'evt-slow-3'].map((id) => slow.send({ id, source: 'shop', type: 't' })));
    expect(results.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0]).toMatchObject({ code: 'HTTP_429', status: 429 });
    expect(retries[0]?.delayMs).toBeGreaterThanOrEqual(1000);
  });

  it('anonymous on loopback (no signing, no keys): accepted', async () => {
    const open = createClient({ baseUrl: `http://127.0.0.1:${await anonymous.metricsPort()}` });
    expect(await open.send({ id: 'evt-open', source: 'shop', type: 'order.created', recipients: ['b@example.test'] })).toMatchObject({ status: 'accepted', attempts: 1 });
  });

  it('verifyDelivery: the receiver acts once even when its first answer is lost and singleshot resends', async () => {
    const key = opKey('evt-lost', 'c@example.test');
    receiver.loseAnswerFor(key);
    const client = createClient({ baseUrl: base, signingSecret: SECRET });
    await client.send({ id: 'evt-lost', source: 'shop', type: 'order.created', recipients: ['c@example.test'], data: { orderId: 'o-2' } });
    await waitUntil(() => sent(key), 'the operation to be sent', { timeoutMs: 60_000 });
    expect(receiver.requests.filter((k) => k === key).length).toBeGreaterThanOrEqual(2);
    expect(receiver.effects.filter((k) => k === key)).toHaveLength(1);
    expect((await rt.operations.get(key))?.externalId).toMatch(/^rcpt-\d+$/);
  });
});
