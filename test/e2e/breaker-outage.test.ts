import { afterEach, describe, expect, it } from 'vitest';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import type { Runtime } from '@singleshot/runtime';
import {
  spawnApps,
  startHttpSink,
  startSmtpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type TestRedis,
} from '@singleshot/test-harness';
import { testRuntime } from '../support/runtime';

// Outages longer than the circuit breaker. A provider that reads each request
// and then hangs, for OUTAGE_MS (40 s by default; BREAKER_OUTAGE_MS overrides
// it), then recovers; 45 notifications; attempts 5, backoff [200, 500, 1000],
// breaker defaults (5 failures, 30 s cooldown). A job waiting at the breaker
// never claims, so half-open cycles use up no attempt: every notification is
// delivered exactly once and none is dead, and while they wait it shows
// (`ops show` fields, `singleshot_operations_waiting`).
const OUTAGE_MS = Number(process.env.BREAKER_OUTAGE_MS ?? 40_000);
const MAILS = 45;
const DELIVERY = { leaseMs: 5_000, attempts: 5, backoffMs: [200, 500, 1_000], concurrency: 8, metricsPort: 0 };

let redis: TestRedis | undefined;
let fleet: AppProcess | undefined;
let rt: Runtime | undefined;
const cleanups: Array<() => void | Promise<void>> = [];

afterEach(async () => {
  await fleet?.stop();
  await rt?.close();
  for (const c of cleanups.splice(0)) await c();
  await redis?.destroy();
  fleet = undefined;
  rt = undefined;
  redis = undefined;
});

const recipients = (channel: string) => Array.from({ length: MAILS }, (_, i) => (channel === 'email' ? `user${i}@example.test` : `hook-user-${i}`));

async function run(channel: 'email' | 'webhook', providers: Record<string, unknown>, outage: { started(): boolean }) {
  redis = await startTestRedis();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: DELIVERY,
    providers,
    routes: [{ name: 'n', match: { source: 'shop' }, action: 'notify', channel, recipients: 'event', template: { subject: 'Order {{id}}', text: 'created' } }],
  });
  const written = writeConfigFile(config);
  cleanups.push(written.cleanup);
  fleet = spawnApps('ingest,decision,delivery', written.file);
  const ingest = `http://127.0.0.1:${await fleet.metricsPort()}`;
  rt = await testRuntime(config);
  const keys: string[] = [];
  for (const [i, recipient] of recipients(channel).entries()) {
    const res = await fetch(`${ingest}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: `evt-${i}`, source: 'shop', type: 'order.created', recipients: [recipient] }),
    });
    expect(res.status).toBe(202);
    keys.push(operationKey({ messageKey: eventMessageKey('shop', `evt-${i}`), action: parseAction('notify'), recipient, channel }));
  }
  const runtime = rt;
  // While the breaker is open the waiting operations show: in their state and in the gauge.
  const waitingKey = await waitUntil(async () => {
    for (const key of keys) if ((await runtime.operations.get(key))?.waitingReason === 'breaker_open') return key;
    return undefined;
  }, 'an operation to wait at the open breaker', { timeoutMs: 60_000 });
  expect(outage.started()).toBe(true);
  expect(await fleet.metric('singleshot_operations_waiting', { reason: 'breaker_open' })).toBeGreaterThan(0);
  expect(keys).toContain(waitingKey);
  // Every operation ends sent.
  await waitUntil(async () => {
    for (const key of keys) if ((await runtime.operations.get(key))?.status !== 'sent') return false;
    return true;
  }, 'every operation to be sent', { timeoutMs: OUTAGE_MS + 100_000, intervalMs: 500 });
  expect(await rt.queues.dead.getWaitingCount()).toBe(0);
  const records = await Promise.all(keys.map(async (k) => (await runtime.operations.get(k))!));
  // Only calls that reached (or may have reached) the provider counted.
  for (const r of records) expect(r.attempts).toBeLessThanOrEqual(DELIVERY.attempts);
  return keys;
}

describe('an outage longer than the breaker', () => {
  it(`an SMTP relay that reads each message and hangs for ${OUTAGE_MS / 1000} s: all ${MAILS} mails delivered exactly once, none dead`, async () => {
    const sink = await startSmtpSink();
    cleanups.push(() => sink.close());
    let start: number | undefined;
    sink.behave(() => {
      start ??= Date.now();
      return Date.now() - start < OUTAGE_MS ? 'hang' : 'ok';
    });
    const keys = await run('email', { email: [{ name: 'relay', type: 'smtp', host: sink.host, port: sink.port, secure: false, from: 'ss@example.test', timeoutMs: 30_000 }] }, { started: () => start !== undefined });
    const taken = sink.taken();
    const byId = new Map<string, number>();
    for (const m of taken) byId.set(m.messageId ?? '', (byId.get(m.messageId ?? '') ?? 0) + 1);
    expect(byId.size).toBe(MAILS);
    expect([...byId.values()].every((n) => n === 1)).toBe(true);
    for (const key of keys) expect([...byId.keys()].some((id) => id.startsWith(`<${key}@`))).toBe(true);
    expect(sink.messages.some((m) => m.outcome === 'hung')).toBe(true);
  });

  it(`an HTTP provider that reads each request and hangs for ${OUTAGE_MS / 1000} s: all ${MAILS} delivered exactly once, none dead`, async () => {
    const sink = await startHttpSink();
    cleanups.push(() => sink.close());
    let start: number | undefined;
    sink.behave(() => {
      start ??= Date.now();
      return Date.now() - start < OUTAGE_MS ? 'hang' : 'ok';
    });
    const keys = await run('webhook', { webhook: [{ name: 'hook', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 10_000 }] }, { started: () => start !== undefined });
    for (const key of keys) expect(sink.accepted.get(key)?.count).toBe(1);
    expect(sink.accepted.size).toBe(MAILS);
  });
});
