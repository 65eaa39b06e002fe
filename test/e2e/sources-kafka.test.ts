import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, Partitioners, logLevel, type Admin, type Producer } from 'kafkajs';
import { parse as parseYaml } from 'yaml';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import {
  REPO_ROOT,
  dlqListJson,
  relayRouteToSink,
  relayTestEvents,
  spawnApps,
  spawnRelay,
  startHttpSink,
  startTestKafka,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type RelayTestEvent,
  type TestKafka,
  type TestRedis,
} from '@singleshot/test-harness';

// Done-when of "Kafka as a source": three relays in one consumer group (real
// processes) on librdkafka's mock cluster (3 brokers, 4 partitions). 2,000
// events, each published twice, while one relay is SIGKILLed at a random
// moment and started again (at least two rebalances): one notification each,
// and every partition's committed offset at its log end. Poison in two
// partitions ends dead and passes; with singleshot's Redis stopped for 20 s
// nothing is committed past an unaccepted record. The source's config is the
// example of docs/sources.md, with the test's brokers.
const EVENTS = 2000;
const SOURCE = 'orders-kafka';

let redis: TestRedis;
let kafka: TestKafka;
let producer: Producer;
let admin: Admin;
let sink: HttpSink;
let configFile: string;
let cleanup: () => void;
let topic: string;
let group: string;
const procs: AppProcess[] = [];
const relays: AppProcess[] = [];

const keyOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'webhook' });
const expectedKeys = (events: RelayTestEvent[]) => new Set(events.flatMap((e) => e.recipients.map((r) => keyOf(e.id, r))));

function docExample(): Record<string, unknown> {
  const text = readFileSync(join(REPO_ROOT, 'docs/sources.md'), 'utf8');
  const m = text.match(/<!-- example: kafka -->\n```yaml\n([\s\S]*?)```/);
  if (!m) throw new Error('docs/sources.md has no kafka example');
  return (parseYaml(m[1] ?? '') as { sources: Array<Record<string, unknown>> }).sources[0] as Record<string, unknown>;
}

/** An at-least-once producer: each send waits for every in-sync replica, and is repeated after a failure. */
async function send(messages: Array<{ key?: string; value: string; partition?: number }>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await producer.send({ topic, acks: -1, messages });
      return;
    } catch (err) {
      if (attempt > 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const publishTwice = (chunk: RelayTestEvent[]) => send([0, 1].flatMap(() => chunk.map((e) => ({ key: e.id, value: JSON.stringify(e) }))));

/** Per partition: the log end and the group's committed offset (-1 when none). */
async function offsets(): Promise<Array<{ partition: number; end: bigint; committed: bigint }>> {
  const [ends, commits] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: group, topics: [topic] })]);
  const committed = new Map((commits[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  return ends.map((p) => ({ partition: p.partition, end: BigInt(p.high), committed: committed.get(p.partition) ?? -1n })).sort((a, b) => a.partition - b.partition);
}

const atLogEnd = async () => {
  const now = await offsets();
  return now.every((p) => p.committed === p.end) ? now : undefined;
};

const printable = (rows: Array<{ partition: number; end: bigint; committed: bigint }>) => rows.map((r) => ({ partition: r.partition, logEnd: String(r.end), committed: String(r.committed) }));

const sumMetric = async (name: string, labels: Record<string, string>) => (await Promise.all(relays.map((r) => r.metric(name, labels)))).reduce((a, b) => a + b, 0);

beforeAll(async () => {
  [redis, kafka] = await Promise.all([startTestRedis(), startTestKafka()]);
  const example = docExample();
  topic = example.topic as string;
  group = example.group as string;
  const client = new Kafka({ clientId: 'singleshot-test', brokers: kafka.brokers, logLevel: logLevel.NOTHING });
  producer = client.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: true });
  admin = client.admin();
  await Promise.all([producer.connect(), admin.connect()]);
  // The topic exists before the relays start (the mock creates it, with 4 partitions, on the first record).
  await publishTwice(relayTestEvents('kafka-first', 1));
  sink = await startHttpSink();
  const config = testConfig({
    redisUrl: redis.url,
    delivery: { leaseMs: 2000, attempts: 5, backoffMs: [100, 200, 400], concurrency: 32, metricsPort: 0 },
    ...relayRouteToSink(sink),
    // A killed relay's partitions move after 10 s rather than the default 30 s.
    sources: [{ ...example, name: SOURCE, brokers: kafka.brokers, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1_000 }],
  });
  const written = writeConfigFile(config);
  configFile = written.file;
  cleanup = written.cleanup;
  procs.push(spawnApps('decision,delivery', configFile));
}, 120_000);

afterAll(async () => {
  await Promise.all([...procs, ...relays].map((p) => p.stop()));
  await Promise.all([producer?.disconnect().catch(() => undefined), admin?.disconnect().catch(() => undefined)]);
  await sink?.close();
  await Promise.all([redis?.destroy(), kafka?.destroy()]);
  cleanup?.();
});

describe('relay: Kafka', () => {
  it(`${EVENTS} events × 2 publishes, three relays in one group, one SIGKILLed and restarted: one notification each, offsets at the log end`, async () => {
    const events = [...relayTestEvents('kafka-first', 1), ...relayTestEvents('kafka', EVENTS)];
    const expected = expectedKeys(events);
    for (let i = 0; i < 3; i++) relays.push(spawnRelay(configFile));
    // All three in the group, holding the four partitions between them.
    await waitUntil(async () => {
      const assigned = relays.map((r) => r.logs.filter((l) => l.event === 'source_rebalanced').at(-1)?.partitions as number[] | undefined);
      return assigned.every((p) => p !== undefined) && assigned.flat().length === 4 && new Set(assigned.flat()).size === 4;
    }, 'three relays to share the four partitions', { timeoutMs: 120_000, intervalMs: 200 });
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const victim = Math.floor(rand() * 3);
    const killAt = 0.3 + rand() * 0.4;
    const survivor = relays[(victim + 1) % 3] as AppProcess;
    const rebalancesBefore = await survivor.metric('singleshot_source_rebalances_total', { source: SOURCE });
    const started = Date.now();
    const chunk = 100;
    for (let i = 1; i < events.length; i += chunk) {
      await publishTwice(events.slice(i, i + chunk));
      if (i / events.length < killAt && (i + chunk) / events.length >= killAt) {
        const dead = relays[victim] as AppProcess;
        dead.signal('SIGKILL');
        await dead.exited();
        // Its partitions move once its session expires: the first rebalance.
        await waitUntil(async () => (await survivor.metric('singleshot_source_rebalances_total', { source: SOURCE })) > rebalancesBefore, 'the group to rebalance without the killed relay', { timeoutMs: 120_000, intervalMs: 250 });
        // Its replacement joins: the second.
        relays[victim] = spawnRelay(configFile);
      }
    }
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 240_000, what: 'every operation to reach the provider' });
    const ms = Date.now() - started;
    // The replacement may join after the others delivered everything; its join is the second rebalance.
    const replacement = relays[victim] as AppProcess;
    await waitUntil(() => replacement.logs.some((l) => l.event === 'source_rebalanced'), 'the restarted relay to join the group', { timeoutMs: 180_000, intervalMs: 250 });
    const rebalances = await waitUntil(async () => {
      const n = (await survivor.metric('singleshot_source_rebalances_total', { source: SOURCE })) - rebalancesBefore;
      return n >= 2 ? n : undefined;
    }, 'the survivors to rejoin with the restarted relay', { timeoutMs: 120_000, intervalMs: 250 });
    const settled = await waitUntil(atLogEnd, 'every partition committed to its log end', { timeoutMs: 60_000, intervalMs: 250 });
    const lags = await waitUntil(async () => {
      const values = await Promise.all([0, 1, 2, 3].map((p) => Promise.all(relays.map((r) => r.metric('singleshot_source_lag', { source: SOURCE, partition: String(p) })))));
      return values.every((perRelay) => perRelay.every((v) => v === 0)) ? values : undefined;
    }, 'the lag of every partition at zero', { timeoutMs: 30_000, intervalMs: 500 }).catch(() => undefined);
    console.warn(JSON.stringify({ figures: 'relay kafka crash run', events: EVENTS + 1, records: (EVENTS + 1) * 2, kills: 1, rebalancesSeenBySurvivor: rebalances, ms, offsets: printable(settled) }));
    expect(rebalances).toBeGreaterThanOrEqual(2);
    const missing = [...expected].filter((k) => !sink.accepted.has(k));
    const duplicates = [...expected].filter((k) => (sink.accepted.get(k)?.count ?? 0) > 1);
    expect({ missing, duplicates }).toEqual({ missing: [], duplicates: [] });
    expect([...sink.accepted.keys()].filter((k) => !expected.has(k))).toEqual([]);
    expect(settled.reduce((sum, p) => sum + p.end, 0n)).toBe(BigInt((EVENTS + 1) * 2));
    expect(lags).toBeDefined();
  }, 600_000);

  it('a poison record in each of two partitions ends dead; every other record is delivered once and the offsets pass them', async () => {
    const good = relayTestEvents('kafka-after-poison', 40);
    const goodKeys = expectedKeys(good);
    const invalidBefore = (await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event').length;
    await send([
      { partition: 0, key: 'kafka-poison-0', value: '{not json' },
      // No key, so no event id: the relay never invents one.
      { partition: 1, value: JSON.stringify({ type: 'order.created', recipients: ['kafka-poison-1@example.com'], data: { orderId: 'p-1' } }) },
      // Around them, in the same partitions, records that are events.
      ...good.flatMap((e, i) => [0, 1].map(() => ({ partition: i % 4, key: e.id, value: JSON.stringify(e) }))),
    ]);
    await sink.waitFor((s) => [...goodKeys].every((k) => s.accepted.has(k)), { timeoutMs: 120_000, what: 'the events beside the poison' });
    const dead = await waitUntil(async () => {
      const rows = (await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event' && (r.job.origin as { type?: string }).type === 'kafka');
      return rows.length === 2 ? rows : undefined;
    }, 'two invalid_event records', { timeoutMs: 60_000, intervalMs: 500 });
    expect(dead.map((r) => (r.job.origin as { partition: number }).partition).sort()).toEqual([0, 1]);
    for (const row of dead) expect(row).toMatchObject({ error: { code: 'INVALID_EVENT' }, job: { source: SOURCE, origin: { type: 'kafka', topic } } });
    expect((await dlqListJson(configFile)).filter((r) => r.reason === 'invalid_event').length).toBe(invalidBefore + 2);
    expect([...goodKeys].map((k) => sink.accepted.get(k)?.count).filter((n) => n !== 1)).toEqual([]);
    const settled = await waitUntil(atLogEnd, 'every partition committed past the poison', { timeoutMs: 60_000, intervalMs: 250 });
    console.warn(JSON.stringify({ figures: 'relay kafka poison', offsets: printable(settled) }));
    expect(await sumMetric('singleshot_source_messages_total', { source: SOURCE, result: 'invalid' })).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it('a relay stopped with SIGTERM exits cleanly and the others take its partitions', async () => {
    const [leaving, ...others] = relays as [AppProcess, ...AppProcess[]];
    leaving.signal('SIGTERM');
    const code = await waitUntil(() => (leaving.child.exitCode === null ? undefined : { code: leaving.child.exitCode }), 'the relay to exit on SIGTERM', { timeoutMs: 60_000, intervalMs: 100 });
    expect(code.code).toBe(0);
    expect(leaving.logs.some((l) => l.event === 'shutdown_timeout')).toBe(false);
    await waitUntil(() => {
      const assigned = others.map((r) => r.logs.filter((l) => l.event === 'source_rebalanced').at(-1)?.partitions as number[] | undefined);
      return assigned.every((p) => p !== undefined) && new Set(assigned.flat()).size === 4;
    }, 'the other relays to hold all four partitions', { timeoutMs: 120_000, intervalMs: 200 });
    const replacement = spawnRelay(configFile);
    relays[0] = replacement;
    await waitUntil(() => replacement.logs.some((l) => l.event === 'source_rebalanced'), 'its replacement to join the group', { timeoutMs: 180_000, intervalMs: 250 });
  }, 360_000);

  it('with singleshot\'s Redis stopped for 20 s nothing is committed past an unaccepted record; afterwards each event is delivered once', async () => {
    const events = relayTestEvents('kafka-outage', 200);
    const expected = expectedKeys(events);
    const before = await waitUntil(atLogEnd, 'the group at the log end before the outage', { timeoutMs: 60_000, intervalMs: 250 });
    const retriesBefore = await sumMetric('singleshot_source_messages_total', { source: SOURCE, result: 'retry' });
    await redis.stop();
    const stoppedAt = Date.now();
    await send(events.map((e) => ({ key: e.id, value: JSON.stringify(e) })));
    await waitUntil(async () => (await sumMetric('singleshot_source_messages_total', { source: SOURCE, result: 'retry' })) > retriesBefore, 'a relay to fail an acceptance while Redis is down', { timeoutMs: 60_000, intervalMs: 200 });
    // Through the outage: no partition's committed offset moves past where it stood, since none of the new records could be accepted.
    let samples = 0;
    while (Date.now() - stoppedAt < 20_000) {
      const now = await offsets();
      for (const p of now) expect(p.committed).toBe(before.find((b) => b.partition === p.partition)?.committed);
      samples++;
      await new Promise((r) => setTimeout(r, 500));
    }
    const during = await offsets();
    await redis.restart();
    await sink.waitFor((s) => [...expected].every((k) => s.accepted.has(k)), { timeoutMs: 120_000, what: 'the events published during the outage' });
    expect([...expected].map((k) => sink.accepted.get(k)?.count).filter((n) => n !== 1)).toEqual([]);
    const settled = await waitUntil(atLogEnd, 'every partition committed to its log end after the outage', { timeoutMs: 60_000, intervalMs: 250 });
    console.warn(JSON.stringify({ figures: 'relay kafka redis outage', events: events.length, samplesDuringOutage: samples, duringOutage: printable(during), after: printable(settled) }));
    expect(samples).toBeGreaterThan(0);
    expect(settled.reduce((sum, p) => sum + p.end, 0n) - before.reduce((sum, p) => sum + p.end, 0n)).toBe(BigInt(events.length));
  }, 240_000);

  it('readiness holds while a relay is in the group and fails once the group cannot be joined', async () => {
    const readiness = async (relay: AppProcess) => {
      const res = await fetch(`http://127.0.0.1:${await relay.metricsPort()}/readyz`);
      return { status: res.status, checks: ((await res.json()) as { checks?: Record<string, string> }).checks ?? {} };
    };
    const up = await waitUntil(async () => {
      const all = await Promise.all(relays.map(readiness));
      return all.every((r) => r.status === 200) ? all : undefined;
    }, 'every relay ready', { timeoutMs: 60_000, intervalMs: 250 });
    for (const r of up) expect(r.checks[`source-${SOURCE}`]).toBe('ok');
    // The brokers gone (the mock cluster cannot come back: it keeps its log in memory, so this is the file's last test).
    await kafka.destroy();
    const down = await waitUntil(async () => {
      const all = await Promise.all(relays.map(readiness));
      return all.every((r) => r.status === 503) ? all : undefined;
    }, 'every relay unready without its brokers', { timeoutMs: 120_000, intervalMs: 250 });
    for (const r of down) expect(r.checks[`source-${SOURCE}`]).toBe('unreachable');
    expect(relays.every((r) => r.child.exitCode === null)).toBe(true);
  }, 240_000);
});
