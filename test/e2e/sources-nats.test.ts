import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  dlqListJson,
  killRelaysDuringOutage,
  relayTestEvents,
  runRelayCrash,
  spawnApps,
  spawnRelay,
  startHttpSink,
  startTestNats,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type RelayTestEvent,
  type TestNats,
  type TestRedis,
} from '@singleshot/test-harness';

// Done-when of "Where events are born", NATS JetStream: 2,000 events, each
// published twice, while the relay is SIGKILLed at random 5+ times and the
// server restarts once; one notification per (event, recipient), none lost,
// nothing pending or unacknowledged at the consumer. Poison is terminated and
// recorded dead with invalid_event; Nats-Msg-Id stands in for a missing id.
const EVENTS = 2000;
const STREAM = 'ORDERS';
const CONSUMER = 'singleshot';

let redis: TestRedis;
let nats: TestNats;
let nc: NatsConnection;
let sink: HttpSink;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];

const keyOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'webhook' });
const expectedKeys = (events: RelayTestEvent[]) => new Set(events.flatMap((e) => e.recipients.map((r) => keyOf(e.id, r))));

/** An at-least-once producer: each publish is acknowledged by the stream, and repeated after a failure (the server restarting). */
async function publish(bodies: Array<{ body: string; msgId?: string }>): Promise<void> {
  const js = jetstream(nc);
  for (const { body, msgId } of bodies) {
    for (let attempt = 0; ; attempt++) {
      try {
        const h = headers();
        if (msgId) h.set('Nats-Msg-Id', msgId);
        await js.publish('orders.created', body, { headers: h, timeout: 2_000 });
        break;
      } catch (err) {
        if (attempt > 100) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

// No Nats-Msg-Id: JetStream would drop the second copy itself; the relay must.
const publishTwice = (chunk: RelayTestEvent[]) => publish([0, 1].flatMap(() => chunk.map((e) => ({ body: JSON.stringify(e) }))));

async function consumerBacklog(): Promise<{ pending: number; unacked: number }> {
  const info = await (await jetstreamManager(nc)).consumers.info(STREAM, CONSUMER);
  return { pending: info.num_pending, unacked: info.num_ack_pending };
}

beforeAll(async () => {
  [redis, nats] = await Promise.all([startTestRedis(), startTestNats()]);
  nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  await (await jetstreamManager(nc)).streams.add({ name: STREAM, subjects: ['orders.>'], storage: StorageType.File });
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    // A short ack wait: a killed relay's unacknowledged messages come back after it.
    sources: [{ type: 'nats', name: 'orders-js', source: 'shop', servers: [nats.url], stream: STREAM, consumer: CONSUMER, concurrency: 64, ackWaitMs: 10_000 }],
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  procs.push(spawnApps('decision,delivery', configFile));
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await nc?.close();
  await sink?.close();
  await Promise.all([redis?.destroy(), nats?.destroy()]);
  cleanup?.();
});

describe('relay: NATS JetStream', () => {
  it(`${EVENTS} events × 2 messages, relay SIGKILLed at random, server restarted: one notification each, nothing pending`, async () => {
    const events = relayTestEvents('nats', EVENTS);
    const expected = expectedKeys(events);
    const started = Date.now();
    let restarts = 0;
    const run = await runRelayCrash({
      configFile,
      events,
      publish: publishTwice,
      minKills: 5,
      midRun: async () => {
        await nats.restart();
        restarts++;
      },
    });
    procs.push(...run.relays);
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 120_000, what: 'every operation to reach the provider' });
    const ms = Date.now() - started;
    await waitUntil(async () => {
      const b = await consumerBacklog();
      return b.pending === 0 && b.unacked === 0;
    }, 'the consumer to have nothing pending', { timeoutMs: 30_000, intervalMs: 200 });
    console.warn(JSON.stringify({ figures: 'relay nats crash run', events: EVENTS, messages: EVENTS * 2, kills: run.kills, serverRestarts: restarts, ms, eventsPerSec: Math.round(EVENTS / (ms / 1000)) }));
    expect(run.kills).toBeGreaterThanOrEqual(5);
    expect(restarts).toBe(1);
    const missing = [...expected].filter((k) => !sink.accepted.has(k));
    const duplicates = [...expected].filter((k) => (sink.accepted.get(k)?.count ?? 0) > 1);
    expect({ missing, duplicates }).toEqual({ missing: [], duplicates: [] });
    expect([...sink.accepted.keys()].filter((k) => !expected.has(k))).toEqual([]);
    expect(await consumerBacklog()).toEqual({ pending: 0, unacked: 0 });
  }, 240_000);

  it('poison is terminated and recorded dead with invalid_event; Nats-Msg-Id stands in for a missing id', async () => {
    const relays = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    if (relays.length < 2) procs.push(spawnRelay(configFile));
    await publish([{ body: '{not json' }, { body: JSON.stringify({ type: 'order.created', data: {} }) }, { body: JSON.stringify({ id: 'nats-bad', type: 'order.created', recipients: [''], data: {} }) }]);
    // No id in the body: the message id the producer gave JetStream is the event id.
    const byHeader = { type: 'order.created', recipients: ['by-header@example.com'], data: { orderId: 'h-1' } };
    await publish([{ body: JSON.stringify(byHeader), msgId: 'nats-header-id-1' }]);
    const headerKey = keyOf('nats-header-id-1', 'by-header@example.com');
    await sink.waitFor((s) => s.accepted.has(headerKey), { timeoutMs: 60_000, what: 'the event identified by Nats-Msg-Id' });
    const dead = await waitUntil(async () => {
      const rows = (await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event' && (r.job.origin as { type?: string }).type === 'nats');
      return rows.length === 3 ? rows : undefined;
    }, 'three invalid_event records', { timeoutMs: 30_000, intervalMs: 500 });
    for (const row of dead) expect(row).toMatchObject({ error: { code: 'INVALID_EVENT' }, job: { source: 'orders-js', origin: { stream: STREAM } } });
    // Terminated, not waiting for a redelivery.
    await waitUntil(async () => {
      const b = await consumerBacklog();
      return b.pending === 0 && b.unacked === 0;
    }, 'nothing pending after the poison', { timeoutMs: 30_000, intervalMs: 200 });
    expect(sink.accepted.get(headerKey)?.count).toBe(1);
  }, 120_000);

  it('while singleshot\'s Redis is down nothing is acked; relays killed then lose nothing', async () => {
    const events = relayTestEvents('nats-outage', 200);
    const relays = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null && p !== procs[0]);
    const { held, relay } = await killRelaysDuringOutage({
      redis,
      relays,
      configFile,
      source: 'orders-js',
      publishOnce: () => publish(events.map((e) => ({ body: JSON.stringify(e) }))),
      held: async () => {
        const b = await consumerBacklog();
        return b.pending + b.unacked;
      },
    });
    procs.push(relay);
    expect(held).toBe(200);
    const expected = expectedKeys(events);
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 90_000, what: 'the events published during the outage' });
    expect([...expected].map((k) => sink.accepted.get(k)?.count).filter((n) => n !== 1)).toEqual([]);
    await waitUntil(async () => {
      const b = await consumerBacklog();
      return b.pending === 0 && b.unacked === 0;
    }, 'nothing pending', { timeoutMs: 30_000, intervalMs: 200 });
  }, 150_000);
});
