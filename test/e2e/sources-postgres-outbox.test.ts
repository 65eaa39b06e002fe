import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'pg';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { enqueue, outboxDdl } from '@singleshot/outbox';
import {
  dlqListJson,
  killRelaysDuringOutage,
  relayTestEvents,
  runRelayCrash,
  spawnApps,
  startHttpSink,
  startTestPostgres,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type RelayTestEvent,
  type TestPostgres,
  type TestRedis,
} from '@singleshot/test-harness';

// Done-when of "Where events are born", PostgreSQL outbox: 2,000 events, each
// enqueued twice (two rows), three relays in parallel on one outbox, one of
// them SIGKILLed at random 5+ times; one notification per (event, recipient),
// none lost, the outbox empty at the end. A rolled-back transaction notifies
// no one; a committed one exactly once.
const EVENTS = 2000;

let redis: TestRedis;
let pg: TestPostgres;
let db: Client;
let sink: HttpSink;
let configFile: string;
let cleanup: () => void;
const procs: AppProcess[] = [];

const keyOf = (e: RelayTestEvent, recipient: string) => operationKey({ messageKey: eventMessageKey('shop', e.id), action: parseAction('notify'), recipient, channel: 'webhook' });
const expectedKeys = (events: RelayTestEvent[]) => new Set(events.flatMap((e) => e.recipients.map((r) => keyOf(e, r))));

async function inTransaction(fn: (client: Client) => Promise<void>, outcome: 'COMMIT' | 'ROLLBACK' = 'COMMIT'): Promise<void> {
  await db.query('BEGIN');
  try {
    await fn(db);
    await db.query(outcome);
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
}

async function publishTwice(chunk: RelayTestEvent[]): Promise<void> {
  for (const _copy of [0, 1]) {
    await inTransaction(async (client) => {
      for (const e of chunk) await enqueue(client, { ...e, source: 'shop' });
    });
  }
}

const rowsLeft = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM singleshot_outbox')).rows[0]?.n);

beforeAll(async () => {
  [redis, pg] = await Promise.all([startTestRedis(), startTestPostgres()]);
  db = new Client({ connectionString: pg.url });
  await db.connect();
  await db.query(outboxDdl());
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
    providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
    sources: [{ type: 'postgres-outbox', name: 'orders-outbox', url: pg.url, batchSize: 100, pollIntervalMs: 500 }],
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  procs.push(spawnApps('decision,delivery', configFile));
}, 120_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await db?.end();
  await sink?.close();
  await Promise.all([redis?.destroy(), pg?.destroy()]);
  cleanup?.();
});

describe('relay: PostgreSQL transactional outbox', () => {
  it(`${EVENTS} events × 2 rows, three relays, one SIGKILLed at random: one notification each, the outbox empty`, async () => {
    const events = relayTestEvents('pg', EVENTS);
    const expected = expectedKeys(events);
    const started = Date.now();
    const run = await runRelayCrash({ configFile, events, publish: publishTwice, minKills: 5, steadyRelays: 2 });
    procs.push(...run.relays);
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 120_000, what: 'every operation to reach the provider' });
    const ms = Date.now() - started;
    await waitUntil(async () => (await rowsLeft()) === 0, 'the outbox to be empty', { timeoutMs: 30_000, intervalMs: 200 });
    const perRelay = await Promise.all(run.relays.map((r) => r.metric('singleshot_source_messages_total', { source: 'orders-outbox' })));
    console.warn(JSON.stringify({ figures: 'relay postgres-outbox crash run', events: EVENTS, rows: EVENTS * 2, relays: 3, kills: run.kills, ms, eventsPerSec: Math.round(EVENTS / (ms / 1000)), messagesPerLiveRelay: perRelay }));
    expect(run.kills).toBeGreaterThanOrEqual(5);
    // The parallel relays shared the work (SKIP LOCKED), not one of them alone.
    expect(perRelay.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    const missing = [...expected].filter((k) => !sink.accepted.has(k));
    const duplicates = [...expected].filter((k) => (sink.accepted.get(k)?.count ?? 0) > 1);
    expect({ missing, duplicates }).toEqual({ missing: [], duplicates: [] });
    expect([...sink.accepted.keys()].filter((k) => !expected.has(k))).toEqual([]);
    expect(await rowsLeft()).toBe(0);
  }, 180_000);

  it('a rolled-back transaction notifies no one; a committed one exactly once', async () => {
    const [rolledBack, committed] = relayTestEvents('pg-tx', 2) as [RelayTestEvent, RelayTestEvent];
    await inTransaction(async (client) => {
      await client.query('SELECT 1');
      await enqueue(client, { ...rolledBack, source: 'shop' });
    }, 'ROLLBACK');
    await inTransaction((client) => enqueue(client, { ...committed, source: 'shop' }));
    const committedKey = keyOf(committed, committed.recipients[0]!);
    await sink.waitFor((s) => s.accepted.has(committedKey), { timeoutMs: 30_000, what: 'the committed event' });
    await waitUntil(async () => (await rowsLeft()) === 0, 'the outbox to be empty', { timeoutMs: 30_000 });
    expect(sink.accepted.get(committedKey)?.count).toBe(1);
    expect(sink.accepted.has(keyOf(rolledBack, rolledBack.recipients[0]!))).toBe(false);
    expect(sink.requests.filter((r) => r.recipient === rolledBack.recipients[0])).toEqual([]);
  }, 60_000);

  it('a row that can never be an event ends dead with invalid_event and leaves the outbox', async () => {
    await db.query(`INSERT INTO singleshot_outbox (event_id, source, type, data) VALUES ('pg-bad-1', 'shop', 'order.created', '[1,2]'::jsonb)`);
    const dead = await waitUntil(async () => (await dlqListJson(configFile)).find((r) => r.reason === 'invalid_event' && (r.job.origin as { table?: string }).table === 'singleshot_outbox'), 'the dead record', { timeoutMs: 30_000, intervalMs: 500 });
    expect(dead.error.code).toBe('INVALID_EVENT');
    await waitUntil(async () => (await rowsLeft()) === 0, 'the outbox to be empty', { timeoutMs: 30_000 });
  }, 60_000);

  it('while singleshot\'s Redis is down no row is deleted; relays killed then lose nothing', async () => {
    const events = relayTestEvents('pg-outage', 200);
    const relays = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null && p !== procs[0]);
    const { held, relay } = await killRelaysDuringOutage({
      redis,
      relays,
      configFile,
      source: 'orders-outbox',
      publishOnce: () => inTransaction(async (client) => {
        for (const e of events) await enqueue(client, { ...e, source: 'shop' });
      }),
      held: rowsLeft,
    });
    procs.push(relay);
    expect(held).toBe(200);
    const expected = expectedKeys(events);
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 60_000, what: 'the events enqueued during the outage' });
    expect([...expected].map((k) => sink.accepted.get(k)?.count).filter((n) => n !== 1)).toEqual([]);
    await waitUntil(async () => (await rowsLeft()) === 0, 'the outbox to be empty', { timeoutMs: 30_000 });
  }, 120_000);
});
