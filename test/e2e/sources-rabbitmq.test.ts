import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  dlqListJson,
  killRelaysDuringOutage,
  relayTestEvents,
  runRelayCrash,
  spawnApps,
  spawnRelay,
  startHttpSink,
  startTestRabbitMq,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type RelayTestEvent,
  type TestRabbitMq,
  type TestRedis,
} from '@singleshot/test-harness';

// Done-when of "Where events are born", RabbitMQ: 2,000 events, each
// published twice, while the relay is SIGKILLed at random 5+ times and the
// broker restarts once; one notification per (event, recipient), none lost,
// nothing left in the queue or unacked. Poison is rejected to the queue's
// dead-letter exchange and recorded dead with invalid_event.
const EVENTS = 2000;
const QUEUE = 'orders';
const DEAD_QUEUE = 'orders.dead';

let redis: TestRedis;
let rabbit: TestRabbitMq;
let sink: HttpSink;
let configFile: string;
let cleanup: () => void;
let publisher: { model: ChannelModel; channel: ConfirmChannel } | undefined;
const procs: AppProcess[] = [];

const expectedKeys = (events: RelayTestEvent[]) =>
  new Set(events.flatMap((e) => e.recipients.map((recipient) => operationKey({ messageKey: eventMessageKey('shop', e.id), action: parseAction('notify'), recipient, channel: 'webhook' }))));

async function channel(): Promise<ConfirmChannel> {
  if (publisher) return publisher.channel;
  const model = await connect(rabbit.url);
  model.on('error', () => undefined);
  const ch = await model.createConfirmChannel();
  ch.on('error', () => undefined);
  const forget = () => (publisher = undefined);
  model.on('close', forget);
  ch.on('close', forget);
  publisher = { model, channel: ch };
  return ch;
}

/** An at-least-once producer: publishes with confirms, and again after a failure. */
async function publish(bodies: Array<{ body: string; messageId?: string }>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const ch = await channel();
      for (const { body, messageId } of bodies) ch.sendToQueue(QUEUE, Buffer.from(body), { persistent: true, contentType: 'application/json', ...(messageId ? { messageId } : {}) });
      await ch.waitForConfirms();
      return;
    } catch (err) {
      publisher = undefined;
      if (attempt > 100) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const publishTwice = (chunk: RelayTestEvent[]) => publish([0, 1].flatMap(() => chunk.map((e) => ({ body: JSON.stringify(e), messageId: e.id }))));

async function queueState(queue: string): Promise<{ messageCount: number; consumerCount: number }> {
  const model = await connect(rabbit.url);
  try {
    const ch = await model.createChannel();
    const { messageCount, consumerCount } = await ch.checkQueue(queue);
    return { messageCount, consumerCount };
  } finally {
    await model.close();
  }
}

beforeAll(async () => {
  [redis, rabbit] = await Promise.all([startTestRedis(), startTestRabbitMq()]);
  const ch = await channel();
  await ch.assertExchange('orders.dlx', 'fanout', { durable: true });
  await ch.assertQueue(DEAD_QUEUE, { durable: true });
  await ch.bindQueue(DEAD_QUEUE, 'orders.dlx', '');
  await ch.assertQueue(QUEUE, { durable: true, arguments: { 'x-dead-letter-exchange': 'orders.dlx' } });
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    sources: [{ type: 'rabbitmq', name: 'orders-queue', source: 'shop', url: rabbit.url, queue: QUEUE, concurrency: 64 }],
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  procs.push(spawnApps('decision,delivery', configFile));
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await publisher?.model.close().catch(() => undefined);
  await sink?.close();
  await Promise.all([redis?.destroy(), rabbit?.destroy()]);
  cleanup?.();
});

describe('relay: RabbitMQ', () => {
  let relay: AppProcess | undefined;

  it(`${EVENTS} events × 2 messages, relay SIGKILLed at random, broker restarted: one notification each, nothing left`, async () => {
    const events = relayTestEvents('rmq', EVENTS);
    const expected = expectedKeys(events);
    const started = Date.now();
    let restarts = 0;
    const run = await runRelayCrash({
      configFile,
      events,
      publish: publishTwice,
      minKills: 5,
      midRun: async () => {
        await rabbit.restart();
        restarts++;
      },
    });
    procs.push(...run.relays);
    relay = run.relays[0];
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 120_000, what: 'every operation to reach the provider' });
    const ms = Date.now() - started;
    console.warn(JSON.stringify({ figures: 'relay rabbitmq crash run', events: EVENTS, messages: EVENTS * 2, kills: run.kills, brokerRestarts: restarts, ms, eventsPerSec: Math.round(EVENTS / (ms / 1000)) }));
    expect(run.kills).toBeGreaterThanOrEqual(5);
    expect(restarts).toBe(1);
    const missing = [...expected].filter((k) => !sink.accepted.has(k));
    const duplicates = [...expected].filter((k) => (sink.accepted.get(k)?.count ?? 0) > 1);
    expect({ missing, duplicates }).toEqual({ missing: [], duplicates: [] });
    expect([...sink.accepted.keys()].filter((k) => !expected.has(k))).toEqual([]);
    // Nothing ready, and nothing unacked: once the relay's connection is gone, an unacked message would be back in the queue.
    await waitUntil(async () => (await queueState(QUEUE)).messageCount === 0, 'the queue to drain', { timeoutMs: 30_000, intervalMs: 200 });
    relay!.signal('SIGKILL');
    await relay!.exited();
    await waitUntil(async () => (await queueState(QUEUE)).consumerCount === 0, 'the broker to see the relay gone', { timeoutMs: 30_000, intervalMs: 200 });
    expect(await queueState(QUEUE)).toEqual({ messageCount: 0, consumerCount: 0 });
  }, 240_000);

  it('poison is rejected to the dead-letter exchange, recorded dead with invalid_event, and the relay moves on', async () => {
    relay = spawnRelay(configFile);
    procs.push(relay);
    await publish([
      { body: '{not json' },
      { body: JSON.stringify({ type: 'order.created', data: {} }) },
      { body: JSON.stringify({ id: 'rmq-bad-fields', type: 'order.created', recipients: 'not-a-list', data: {} }) },
    ]);
    const after = relayTestEvents('rmq-after-poison', 3);
    await publishTwice(after);
    const afterKeys = expectedKeys(after);
    await sink.waitFor((s) => [...afterKeys].every((k) => s.accepted.has(k)), { timeoutMs: 60_000, what: 'the events after the poison' });
    const dead = await waitUntil(async () => {
      const rows = (await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event' && (r.job.origin as { type?: string }).type === 'rabbitmq');
      return rows.length === 3 ? rows : undefined;
    }, 'three invalid_event records', { timeoutMs: 30_000, intervalMs: 500 });
    for (const row of dead) expect(row).toMatchObject({ error: { code: 'INVALID_EVENT' }, job: { source: 'orders-queue', origin: { queue: QUEUE } } });
    await waitUntil(async () => (await queueState(DEAD_QUEUE)).messageCount === 3, 'the poison in the dead-letter queue', { timeoutMs: 30_000, intervalMs: 200 });
    expect((await queueState(QUEUE)).messageCount).toBe(0);
    expect(await relay.metric('singleshot_source_messages_total', { source: 'orders-queue', result: 'invalid' })).toBe(3);
  }, 120_000);

  it('while singleshot\'s Redis is down nothing is acked; relays killed then lose nothing', async () => {
    const events = relayTestEvents('rmq-outage', 200);
    const { held, relay: next } = await killRelaysDuringOutage({
      redis,
      relays: [relay!],
      configFile,
      source: 'orders-queue',
      publishOnce: () => publish(events.map((e) => ({ body: JSON.stringify(e), messageId: e.id }))),
      held: async () => {
        await waitUntil(async () => (await queueState(QUEUE)).consumerCount === 0, 'the broker to see the relay gone', { timeoutMs: 30_000, intervalMs: 200 });
        return (await queueState(QUEUE)).messageCount;
      },
    });
    procs.push(next);
    expect(held).toBe(200);
    const expected = expectedKeys(events);
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 60_000, what: 'the events published during the outage' });
    expect([...expected].map((k) => sink.accepted.get(k)?.count).filter((n) => n !== 1)).toEqual([]);
    await waitUntil(async () => (await queueState(QUEUE)).messageCount === 0, 'the queue to drain', { timeoutMs: 30_000, intervalMs: 200 });
  }, 120_000);
});
