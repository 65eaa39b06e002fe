import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  dlqListJson,
  relayTestEvents,
  runRelayCrash,
  spawnApps,
  spawnRelay,
  startHttpSink,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type RelayTestEvent,
  type TestRedis,
} from '@singleshot/test-harness';

// Done-when of "Where events are born", Redis Streams: 2,000 events, each
// added to the stream twice, while the relay is SIGKILLed at random (its
// pending entries are claimed by the next relay); one notification per
// (event, recipient), none lost, nothing pending. Then poison, and outages of
// singleshot's Redis and of the stream's Redis while the relay consumes.
const EVENTS = 2000;
const STREAM = 'orders';
const GROUP = 'singleshot';

let redis: TestRedis;
let origin: TestRedis;
let originClient: Redis;
let sink: HttpSink;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];
/** The relays running now (the crash run leaves one). */
let liveRelays: AppProcess[] = [];

const expectedKeys = (events: RelayTestEvent[]) =>
  new Set(events.flatMap((e) => e.recipients.map((recipient) => operationKey({ messageKey: eventMessageKey('shop', e.id), action: parseAction('notify'), recipient, channel: 'webhook' }))));

const publishTwice = (chunk: RelayTestEvent[]) => publish(chunk, [0, 1]);
const publishOnce = (chunk: RelayTestEvent[]) => publish(chunk, [0]);

async function publish(chunk: RelayTestEvent[], copies: number[]): Promise<void> {
  const pipeline = originClient.pipeline();
  for (const copy of copies) for (const e of chunk) pipeline.xadd(STREAM, '*', 'event', JSON.stringify(e), 'copy', String(copy));
  const results = await pipeline.exec();
  for (const [err] of results ?? []) if (err) throw err;
}

/** Entries delivered to the group and not acknowledged, and entries not delivered yet. */
async function groupBacklog(): Promise<{ pending: number; lag: number }> {
  const groups = (await originClient.call('XINFO', 'GROUPS', STREAM)) as unknown[][];
  for (const g of groups) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < g.length; i += 2) info[String(g[i])] = g[i + 1];
    if (info.name === GROUP) return { pending: Number(info.pending), lag: Number(info.lag ?? 0) };
  }
  throw new Error('no consumer group');
}

async function waitForAll(expected: Set<string>, timeoutMs = 120_000): Promise<void> {
  await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs, what: 'every operation to reach the provider' });
}

function effects(expected: Set<string>): { missing: string[]; duplicates: string[] } {
  const missing = [...expected].filter((k) => !sink.accepted.has(k));
  const duplicates = [...expected].filter((k) => (sink.accepted.get(k)?.count ?? 0) > 1);
  return { missing, duplicates };
}

beforeAll(async () => {
  [redis, origin] = await Promise.all([startTestRedis(), startTestRedis()]);
  originClient = new Redis(origin.url, { maxRetriesPerRequest: 1 });
  originClient.on('error', () => undefined);
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    sources: [{ type: 'redis-streams', name: 'orders-stream', source: 'shop', url: origin.url, stream: STREAM, group: GROUP, claimIdleMs: 1000, concurrency: 64 }],
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  procs.push(spawnApps('decision,delivery', configFile));
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  originClient?.disconnect();
  await sink?.close();
  await Promise.all([redis?.destroy(), origin?.destroy()]);
  cleanup?.();
});

describe('relay: Redis Streams', () => {
  it(`${EVENTS} events × 2 entries, relay SIGKILLed at random: one notification each, nothing pending`, async () => {
    const events = relayTestEvents('rs', EVENTS);
    const expected = expectedKeys(events);
    const started = Date.now();
    const run = await runRelayCrash({ configFile, events, publish: publishTwice, minKills: 5 });
    procs.push(...run.relays);
    liveRelays = run.relays;
    await waitForAll(expected);
    const ms = Date.now() - started;
    await waitUntil(async () => {
      const b = await groupBacklog();
      return b.pending === 0 && b.lag === 0;
    }, 'the group to have nothing pending', { timeoutMs: 30_000, intervalMs: 200 });
    const relay = run.relays[0]!;
    const accepted = await relay.metric('singleshot_source_messages_total', { source: 'orders-stream', result: 'accepted' });
    console.warn(JSON.stringify({ figures: 'relay redis-streams crash run', events: EVENTS, entries: EVENTS * 2, kills: run.kills, ms, eventsPerSec: Math.round(EVENTS / (ms / 1000)), acceptedByLastRelay: accepted }));
    expect(run.kills).toBeGreaterThanOrEqual(5);
    expect(effects(expected)).toEqual({ missing: [], duplicates: [] });
    expect([...sink.accepted.keys()].filter((k) => !expected.has(k))).toEqual([]);
    expect(await groupBacklog()).toEqual({ pending: 0, lag: 0 });
  }, 180_000);

  it('poison entries end dead with invalid_event (dlq list) and the relay moves on', async () => {
    await originClient.xadd(STREAM, '*', 'event', '{not json');
    await originClient.xadd(STREAM, '*', 'event', JSON.stringify({ type: 'order.created', data: {} }));
    await originClient.xadd(STREAM, '*', 'other', 'x');
    const after = relayTestEvents('rs-after-poison', 3);
    await publishTwice(after);
    await waitForAll(expectedKeys(after), 60_000);
    const dead = await waitUntil(async () => {
      const rows = (await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event');
      return rows.length === 3 ? rows : undefined;
    }, 'three invalid_event records', { timeoutMs: 30_000, intervalMs: 500 });
    for (const row of dead) {
      expect(row.error.code).toBe('INVALID_EVENT');
      expect(row.job).toMatchObject({ source: 'orders-stream', origin: { type: 'redis-streams', stream: STREAM } });
    }
    await waitUntil(async () => (await groupBacklog()).pending === 0, 'poison acknowledged', { timeoutMs: 30_000 });
  }, 120_000);

  it('outages of singleshot\'s Redis and of the stream\'s Redis: nothing acknowledged unaccepted, all delivered once', async () => {
    const events = relayTestEvents('rs-outage', 600);
    const expected = expectedKeys(events);
    await publishTwice(events.slice(0, 200));
    await waitForAll(expectedKeys(events.slice(0, 200)), 60_000);
    await waitUntil(async () => {
      const b = await groupBacklog();
      return b.pending === 0 && b.lag === 0;
    }, 'the first entries acknowledged', { timeoutMs: 30_000, intervalMs: 200 });
    // singleshot's Redis dies; entries published now (one copy each: no
    // second copy could make up for one acknowledged unaccepted) cannot be
    // accepted, so the relay reads them and must leave every one pending.
    await redis.kill9();
    await publishOnce(events.slice(200, 400));
    const held = await waitUntil(async () => {
      const b = await groupBacklog();
      return b.pending > 0 ? b : undefined;
    }, 'the relay to hold entries it cannot accept', { timeoutMs: 30_000, intervalMs: 100 });
    expect(held.pending + held.lag).toBe(200);
    // The relay dies holding them; a new one claims them once Redis is back.
    for (const relay of liveRelays) {
      relay.signal('SIGKILL');
      await relay.exited();
    }
    liveRelays = [spawnRelay(configFile)];
    procs.push(...liveRelays);
    await redis.restart();
    await waitForAll(expectedKeys(events.slice(0, 400)), 120_000);
    // Now the stream's own Redis goes away (and comes back on its AOF).
    await publishTwice(events.slice(400));
    await origin.kill9();
    await origin.restart();
    await waitForAll(expected, 120_000);
    await waitUntil(async () => {
      const b = await groupBacklog();
      return b.pending === 0 && b.lag === 0;
    }, 'the group to have nothing pending', { timeoutMs: 30_000, intervalMs: 200 });
    expect(effects(expected)).toEqual({ missing: [], duplicates: [] });
  }, 240_000);

  it('a relay stops on SIGTERM: graceful, exit 0', async () => {
    const relay = spawnRelay(configFile);
    procs.push(relay);
    await relay.metricsPort();
    relay.signal('SIGTERM');
    expect(await relay.exited()).toBe(0);
    expect(relay.logs.some((l) => l.event === 'shutdown_complete')).toBe(true);
  }, 60_000);
});
