import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startFakeSendgrid,
  startFakeSes,
  startTestRedis,
  testConfig,
  waitForQueuesIdle,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type FakeProviderApi,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// The seeds' production chain: Amazon SES first, SendGrid as the fallback, in a
// real fleet (ingest, decision, delivery processes on a real Redis) against
// fakes speaking the SES v2 and SendGrid v3 wire formats. SES first refuses
// connections, then answers 503s, then recovers; every event is posted twice
// (at-least-once input), and every notification must reach exactly one
// vendor exactly once. The breaker is kept out of the way (its own e2e test is
// resilience-fallback.test.ts) so that every operation meets the fault itself.
describe('SES → SendGrid chain of the seeds', () => {
  let redis: TestRedis;
  let ses: FakeProviderApi;
  let sendgrid: FakeProviderApi;
  let fleet: AppProcess;
  let rt: Runtime;
  let base: string;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis();
    [ses, sendgrid] = await Promise.all([startFakeSes(), startFakeSendgrid()]);
    const config = testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: 5000, attempts: 5, backoffMs: [50, 100, 200], concurrency: 4, metricsPort: 0, providerAttempts: 2, breaker: { failureThreshold: 1000, cooldownMs: 500 } },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'email', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}} was created' } }],
      providers: {
        email: [
          { name: 'ses', type: 'ses', region: 'eu-west-1', endpoint: ses.origin, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, from: 'orders@example.test', timeoutMs: 3000 },
          { name: 'sendgrid', type: 'sendgrid', endpoint: sendgrid.origin, apiKey: 'SG.test', from: 'orders@example.test', timeoutMs: 3000 },
        ],
      },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    await ses.down();
    fleet = spawnApps('ingest,decision,delivery', written.file);
    base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await Promise.all([ses?.close(), sendgrid?.close()]);
    await redis?.destroy();
    cleanup?.();
  });

  const post = async (id: string, recipient: string) => {
    const event = { id, source: 'shop', type: 'order.created', recipients: [recipient], data: { orderId: id } };
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      expect(res.status).toBe(202);
    }
    return operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'email' });
  };
  const sentBy = async (key: string) => {
    const record = await rt.operations.get(key);
    return record?.status === 'sent' ? record.provider : undefined;
  };
  const phase = async (name: string, count: number) => {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push(await post(`${name}-${i}`, `${name}-${i}@example.test`));
    for (const key of keys) await waitUntil(() => sentBy(key), `${name}: the operation to be sent`, { timeoutMs: 60_000 });
    return keys;
  };
  const copies = (key: string) => (ses.accepted.get(key)?.count ?? 0) + (sendgrid.accepted.get(key)?.count ?? 0);

  it('SES refusing connections, then answering 503s: each notification sent once, by SendGrid; SES again once it answers', async () => {
    const refused = await phase('refused', 5);
    for (const key of refused) expect(await sentBy(key)).toBe('sendgrid');
    expect(ses.requests).toHaveLength(0);

    await ses.up();
    ses.behave(() => 'unavailable');
    const unavailable = await phase('unavailable', 5);
    for (const key of unavailable) expect(await sentBy(key)).toBe('sendgrid');
    // Refused: straight to SendGrid. 503: SES's budget of two calls per operation, then SendGrid.
    for (const key of unavailable) expect(ses.countFor(key)).toBe(2);
    expect(ses.accepted.size).toBe(0);

    ses.behave(undefined);
    const recovered = await phase('recovered', 3);
    for (const key of recovered) expect(await sentBy(key)).toBe('ses');

    await waitForQueuesIdle(rt.queues);
    for (const key of [...refused, ...unavailable, ...recovered]) {
      expect(copies(key)).toBe(1);
      const record = await rt.operations.get(key);
      const vendor = record?.provider === 'ses' ? ses : sendgrid;
      expect(record?.externalId).toBe(vendor.accepted.get(key)?.ids[0]);
      const entries = await rt.journal.forOperation(key, record?.journalIds ?? []);
      expect(entries.filter((e) => e.type === 'sent')).toHaveLength(1);
    }
    // SendGrid got the operation key in custom_args: the vendor-side record of who sent what.
    const first = sendgrid.accepted.get(refused[0] as string)?.body as { custom_args: Record<string, string> };
    expect(first.custom_args.operation_key).toBe(refused[0]);
    expect(await fleet.metric('singleshot_fallback_switches_total', { channel: 'email', from: 'ses', to: 'sendgrid' })).toBeGreaterThanOrEqual(5);
  });
});

// SES takes the mail and the answer is lost: singleshot cannot ask SES, so the
// operation must never be handed to SendGrid. With `inDoubtPolicy: dead` it is
// parked in the DLQ after one SES copy; SendGrid never hears of it.
describe('SES → SendGrid chain: an in-doubt SES send', () => {
  let redis: TestRedis;
  let ses: FakeProviderApi;
  let sendgrid: FakeProviderApi;
  let fleet: AppProcess;
  let rt: Runtime;
  let cleanup: () => void;

  beforeAll(async () => {
    redis = await startTestRedis();
    [ses, sendgrid] = await Promise.all([startFakeSes(), startFakeSendgrid()]);
    const config = testConfig({
      redisUrl: redis.url,
      delivery: { leaseMs: 5000, attempts: 5, backoffMs: [50, 100, 200], concurrency: 2, metricsPort: 0, inDoubtPolicy: 'dead' },
      routes: [{ name: 'orders', match: { source: 'shop' }, action: 'notify', channel: 'email', recipients: 'event', template: { subject: 'Order', text: 'created' } }],
      providers: {
        email: [
          { name: 'ses', type: 'ses', region: 'eu-west-1', endpoint: ses.origin, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, from: 'orders@example.test', timeoutMs: 3000 },
          { name: 'sendgrid', type: 'sendgrid', endpoint: sendgrid.origin, apiKey: 'SG.test', from: 'orders@example.test', timeoutMs: 3000 },
        ],
      },
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    fleet = spawnApps('ingest,decision,delivery', written.file);
    await fleet.metricsPort();
    rt = await testRuntime(config);
  });

  afterAll(async () => {
    await fleet?.stop();
    await rt?.close();
    await Promise.all([ses?.close(), sendgrid?.close()]);
    await redis?.destroy();
    cleanup?.();
  });

  it('is parked in the DLQ after one SES copy, never sent through SendGrid', async () => {
    const recipient = 'doubt@example.test';
    ses.scriptFor(recipient, 'accept-then-drop');
    const base = `http://127.0.0.1:${await fleet.metricsPort()}`;
    const event = { id: 'evt-doubt', source: 'shop', type: 'order.created', recipients: [recipient], data: {} };
    const res = await fetch(`${base}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    expect(res.status).toBe(202);
    const key = operationKey({ messageKey: eventMessageKey('shop', 'evt-doubt'), action: parseAction('notify'), recipient, channel: 'email' });
    await waitUntil(async () => ((await rt.operations.get(key))?.status === 'dead' ? true : undefined), 'the operation to be parked', { timeoutMs: 60_000 });
    expect(ses.accepted.get(key)?.count).toBe(1);
    expect(sendgrid.requests).toHaveLength(0);
    const history = await rt.operations.history(key);
    expect(history.map((h) => `${h.step ?? 'send'}:${h.provider ?? ''}:${h.outcome}`)).toContain('send:ses:in_doubt');
    expect(history.some((h) => h.provider === 'sendgrid')).toBe(false);
  });
});
