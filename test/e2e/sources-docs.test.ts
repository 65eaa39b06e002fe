import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { loadConfig } from '@singleshot/config';
import { eventMessageKey, operationKey, parseAction } from '@singleshot/core';
import { enqueue, outboxDdl } from '@singleshot/outbox';
import {
  CLI_MAIN,
  REPO_ROOT,
  spawnApps,
  startHttpSink,
  startTestNats,
  startTestPostgres,
  startTestRabbitMq,
  startTestRedis,
  testConfig,
  waitUntil,
  writeConfigFile,
  type AppProcess,
  type HttpSink,
  type TestNats,
  type TestPostgres,
  type TestRabbitMq,
  type TestRedis,
} from '@singleshot/test-harness';

// Every configuration example of docs/sources.md, loaded through the config
// loader and run by `singleshot start` (the relay beside ingest) against a
// real origin: only the connection address (url, servers) is swapped for the
// test's own server. Each origin gets the message its section describes, and
// each becomes exactly one notification. Then readiness: it fails while a
// source cannot reach its origin, and recovers with it.

type Example = { type: string; [key: string]: unknown };

function docExamples(): Map<string, Example> {
  const text = readFileSync(join(REPO_ROOT, 'docs/sources.md'), 'utf8');
  const out = new Map<string, Example>();
  for (const m of text.matchAll(/<!-- example: ([a-z-]+) -->\n```yaml\n([\s\S]*?)```/g)) {
    const parsed = parseYaml(m[2] ?? '') as { sources: Example[] };
    out.set(m[1] ?? '', parsed.sources[0] as Example);
  }
  return out;
}

let redis: TestRedis;
let pg: TestPostgres;
let rabbit: TestRabbitMq;
let nats: TestNats;
let sink: HttpSink;
let app: AppProcess;
let configFile: string;
let cleanup: () => void;

const keyOf = (id: string, recipient: string) => operationKey({ messageKey: eventMessageKey('shop', id), action: parseAction('notify'), recipient, channel: 'webhook' });

beforeAll(async () => {
  [redis, pg, rabbit, nats] = await Promise.all([startTestRedis(), startTestPostgres(), startTestRabbitMq(), startTestNats()]);
  sink = await startHttpSink();
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await sink?.close();
  await Promise.all([redis?.destroy(), pg?.destroy(), rabbit?.destroy(), nats?.destroy()]);
  cleanup?.();
});

describe('docs/sources.md examples', () => {
  it('each example loads, runs under singleshot start against its broker, and notifies once', async () => {
    const examples = docExamples();
    // Kafka's example runs in sources-kafka.test.ts, on the mock cluster that file starts.
    expect(examples.delete('kafka')).toBe(true);
    expect([...examples.keys()].sort()).toEqual(['nats', 'postgres-outbox', 'rabbitmq', 'redis-streams']);
    const address: Record<string, Record<string, unknown>> = {
      'postgres-outbox': { url: pg.url },
      rabbitmq: { url: rabbit.url },
      nats: { servers: [nats.url] },
      'redis-streams': { url: redis.url },
    };
    const sources = [...examples.entries()].map(([name, example]) => ({ ...example, ...address[name] }));
    const config = testConfig({
      redisUrl: redis.url,
      routes: [{ name: 'orders', match: { source: 'shop', type: 'order.created' }, action: 'notify', channel: 'webhook', recipients: 'event', template: { subject: 'Order {{data.orderId}}', text: 'Order {{data.orderId}}' } }],
      providers: { webhook: [{ name: 'primary', type: 'http', url: sink.url, lookupUrl: sink.lookupUrl, timeoutMs: 2000 }] },
      sources,
    });
    const written = writeConfigFile(config);
    cleanup = written.cleanup;
    // The YAML form operators write, through the loader.
    configFile = written.file.replace(/\.json$/, '.yaml');
    writeFileSync(configFile, stringify(config));
    const loaded = loadConfig({ file: configFile, env: {} }).config;
    expect(loaded.sources.map((s) => s.type).sort()).toEqual(['nats', 'postgres-outbox', 'rabbitmq', 'redis-streams']);

    // The origins as each section describes them.
    const db = new Client({ connectionString: pg.url });
    await db.connect();
    await db.query(outboxDdl());
    const amqp = await amqpConnect(rabbit.url);
    const ch = await amqp.createConfirmChannel();
    await ch.assertQueue('orders', { durable: true });
    const nc = await natsConnect({ servers: nats.url });
    await (await jetstreamManager(nc)).streams.add({ name: 'ORDERS', subjects: ['orders.>'], storage: StorageType.File });

    app = spawnApps('ingest,decision,delivery', configFile);
    const port = await app.metricsPort();
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 'every source connected', { timeoutMs: 60_000, intervalMs: 200 });

    await db.query('BEGIN');
    await enqueue(db, { id: 'ev-pg-1', source: 'shop', type: 'order.created', recipients: ['pg@example.com'], data: { orderId: '1' } });
    await db.query('COMMIT');
    ch.sendToQueue('orders', Buffer.from(JSON.stringify({ type: 'order.created', recipients: ['rmq@example.com'], data: { orderId: '2' } })), { persistent: true, messageId: 'ev-rmq-1' });
    await ch.waitForConfirms();
    await jetstream(nc).publish('orders.created', JSON.stringify({ orderEvent: { id: 'ev-nats-1', orderId: '3', email: 'nats@example.com' }, to: ['nats@example.com'] }));
    const streamClient = new Redis(redis.url);
    await streamClient.xadd('orders', '*', 'event', JSON.stringify({ id: 'ev-rs-1', type: 'order.created', recipients: ['rs@example.com'], data: { orderId: '4' } }));

    const expected = [keyOf('ev-pg-1', 'pg@example.com'), keyOf('ev-rmq-1', 'rmq@example.com'), keyOf('ev-nats-1', 'nats@example.com'), keyOf('ev-rs-1', 'rs@example.com')];
    await sink.waitFor((s) => expected.every((k) => s.accepted.has(k)), { timeoutMs: 60_000, what: 'one notification per example' });
    expect(expected.map((k) => sink.accepted.get(k)?.count)).toEqual([1, 1, 1, 1]);
    for (const name of ['orders-outbox', 'orders-queue', 'orders-js', 'orders-stream']) {
      expect(await app.metric('singleshot_source_messages_total', { source: name, result: 'accepted' })).toBe(1);
    }
    // Each source's lag is exported, and is zero once its message was taken.
    await waitUntil(async () => {
      const lags = await Promise.all(['orders-outbox', 'orders-queue', 'orders-js', 'orders-stream'].map((s) => app.metric('singleshot_source_lag', { source: s })));
      return lags.every((l) => l === 0);
    }, 'every lag at zero', { timeoutMs: 30_000, intervalMs: 500 });
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text.match(/^singleshot_source_lag\{source="[a-z-]+"\} 0$/gm)?.length).toBe(4);
    // `singleshot queues` lists every configured source with what its relay last reported.
    const listed = await waitUntil(() => {
      const out = spawnSync(process.execPath, [CLI_MAIN, 'queues', '--json', '--config', configFile], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
      const rows = (JSON.parse(out.stdout) as { sources: Array<{ source: string; type: string; state: string; lag: number | null }> }).sources;
      return rows.every((r) => r.state === 'reachable' && r.lag === 0) ? rows : undefined;
    }, 'queues to list every source reachable with lag 0', { timeoutMs: 30_000, intervalMs: 1_000 });
    expect(listed.map((r) => [r.source, r.type]).sort()).toEqual([
      ['orders-js', 'nats'],
      ['orders-outbox', 'postgres-outbox'],
      ['orders-queue', 'rabbitmq'],
      ['orders-stream', 'redis-streams'],
    ]);

    await amqp.close();
    await nc.close();
    await db.end();
    streamClient.disconnect();
  }, 180_000);

  it('readiness fails while a source cannot reach its origin, and recovers with it', async () => {
    const port = await app.metricsPort();
    const ready = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: res.status, body: (await res.json()) as { checks?: Record<string, string> } };
    };
    await rabbit.stop();
    const down = await waitUntil(async () => {
      const r = await ready();
      return r.status === 503 ? r : undefined;
    }, 'readiness to fail', { timeoutMs: 30_000, intervalMs: 200 });
    expect(JSON.stringify(down.body)).toContain('relay-worker');
    await rabbit.start();
    await waitUntil(async () => (await ready()).status === 200, 'readiness to recover', { timeoutMs: 60_000, intervalMs: 200 });
  }, 120_000);
});
