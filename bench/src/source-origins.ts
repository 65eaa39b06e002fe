import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { Client } from 'pg';
import { startKafka, startNats, startRabbitMq } from './brokers';
import { startPostgres, startRedis, type BenchServer } from './servers';
import type { SourceKind } from './sources-table';

/** One event as a producer publishes it: the same body on every way in. */
export interface BenchEvent {
  id: string;
  type: string;
  recipients: string[];
  data: { benchEvent: string; orderId: string };
}

/**
 * Where events are born for one source row: its server (started on a free
 * loopback port, temp dir), the `sources:` entry pointing the relay at it,
 * and an at-least-once producer: `publish` resolves once the origin has
 * every message durably (confirms, stream acks, commit).
 */
export interface Origin {
  /** The `sources:` entry for singleshot's config. */
  source: Record<string, unknown>;
  publish(events: readonly BenchEvent[]): Promise<void>;
  stop(): Promise<void>;
}

const QUEUE = 'bench-orders';
const STREAM = 'BENCH';

async function rabbitmqOrigin(server: BenchServer): Promise<Origin> {
  const model = await amqpConnect(server.url);
  const channel = await model.createConfirmChannel();
  await channel.assertQueue(QUEUE, { durable: true });
  return {
    source: { type: 'rabbitmq', name: 'bench-queue', source: 'bench', url: server.url, queue: QUEUE, id: { from: 'property', name: 'messageId' } },
    publish: async (events) => {
      for (const e of events) channel.sendToQueue(QUEUE, Buffer.from(JSON.stringify(e)), { persistent: true, contentType: 'application/json', messageId: e.id });
      await channel.waitForConfirms();
    },
    stop: async () => {
      await model.close().catch(() => undefined);
      await server.stop();
    },
  };
}

async function natsOrigin(server: BenchServer): Promise<Origin> {
  const nc = await natsConnect({ servers: server.url });
  await (await jetstreamManager(nc)).streams.add({ name: STREAM, subjects: ['bench.>'], storage: StorageType.File });
  const js = jetstream(nc);
  return {
    // The id comes from the body, and no Nats-Msg-Id is sent: the stream's own
    // deduplication would drop the second copy before the relay saw it.
    source: { type: 'nats', name: 'bench-js', source: 'bench', servers: [server.url], stream: STREAM, consumer: 'singleshot' },
    publish: async (events) => {
      await Promise.all(events.map((e) => js.publish('bench.created', JSON.stringify(e))));
    },
    stop: async () => {
      await nc.close().catch(() => undefined);
      await server.stop();
    },
  };
}

async function redisStreamsOrigin(server: BenchServer): Promise<Origin> {
  const redis = new Redis(server.url, { maxRetriesPerRequest: 3 });
  return {
    source: { type: 'redis-streams', name: 'bench-stream', source: 'bench', url: server.url, stream: 'bench-orders', payloadField: 'event' },
    publish: async (events) => {
      const pipeline = redis.pipeline();
      for (const e of events) pipeline.xadd('bench-orders', '*', 'event', JSON.stringify(e));
      await pipeline.exec();
    },
    stop: async () => {
      redis.disconnect();
      await server.stop();
    },
  };
}

async function kafkaOrigin(server: BenchServer): Promise<Origin> {
  const brokers = server.url.split(',');
  const producer = new Kafka({ clientId: 'singleshot-bench', brokers, logLevel: logLevel.NOTHING }).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const send = (events: readonly BenchEvent[]) => producer.send({ topic: 'bench-orders', acks: -1, messages: events.map((e) => ({ key: e.id, value: JSON.stringify(e) })) });
  // The mock creates a topic (4 partitions) on its first record, and the relay
  // is ready only once it joined its group on an existing topic: one event
  // outside the measured ones creates it.
  await send([{ id: 'bench-kafka-topic', type: 'order.created', recipients: ['topic@example.com'], data: { benchEvent: 'bench-kafka-topic', orderId: '0' } }]);
  return {
    source: { type: 'kafka', name: 'bench-kafka', source: 'bench', brokers, topic: 'bench-orders', id: { from: 'key' } },
    publish: async (events) => {
      await send(events);
    },
    stop: async () => {
      await producer.disconnect().catch(() => undefined);
      await server.stop();
    },
  };
}

async function outboxOrigin(server: BenchServer): Promise<Origin> {
  const client = new Client({ connectionString: server.url });
  await client.connect();
  // libs/outbox's table (docs/sources.md): the bench may not import the library
  // (type:bench imports only libs/core), so it writes the documented rows as a
  // producer in another language would, insert and notify in one transaction.
  await client.query(`CREATE TABLE singleshot_outbox (
    seq bigserial PRIMARY KEY, event_id text NOT NULL, source text NOT NULL, type text NOT NULL,
    recipients jsonb, data jsonb NOT NULL DEFAULT '{}'::jsonb, created_at timestamptz NOT NULL DEFAULT now())`);
  return {
    source: { type: 'postgres-outbox', name: 'bench-outbox', url: server.url },
    publish: async (events) => {
      const values = events.flatMap((e) => [e.id, 'bench', e.type, JSON.stringify(e.recipients), JSON.stringify(e.data)]);
      const rows = events.map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`).join(', ');
      await client.query('BEGIN');
      try {
        await client.query(`INSERT INTO singleshot_outbox (event_id, source, type, recipients, data) VALUES ${rows}`, values);
        await client.query("SELECT pg_notify('singleshot_outbox', 'singleshot_outbox')");
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    stop: async () => {
      await client.end().catch(() => undefined);
      await server.stop();
    },
  };
}

/** Starts the origin of a source row (not `http`, whose producer is the bench posting to ingest). */
export async function startOrigin(kind: Exclude<SourceKind, 'http'>): Promise<Origin> {
  const starters = { rabbitmq: startRabbitMq, nats: startNats, 'redis-streams': () => startRedis('everysec'), kafka: startKafka, 'postgres-outbox': startPostgres };
  const server = await starters[kind]();
  try {
    if (kind === 'kafka') return await kafkaOrigin(server);
    if (kind === 'rabbitmq') return await rabbitmqOrigin(server);
    if (kind === 'nats') return await natsOrigin(server);
    if (kind === 'redis-streams') return await redisStreamsOrigin(server);
    return await outboxOrigin(server);
  } catch (err) {
    await server.stop();
    throw err;
  }
}
