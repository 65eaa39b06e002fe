import { Kafka, logLevel, type Admin, type Consumer, type KafkaConfig, type KafkaMessage, type LogEntry } from 'kafkajs';
import type { KafkaSourceConfig } from '@singleshot/config';
import type { Logger } from '@singleshot/observability';
import { deriveEvent } from '../derive';
import type { Source, SourceDeps } from '../source';
import { sourceLoop, type SourceAdapter } from '../source-loop';
import type { SourceSession } from '../source-session';
import { processBatch } from './kafka-batch';
import { Slots } from './kafka-progress';

/** Partitions whose batches are in acceptance at once; the records across them are bounded by `concurrency`. */
const PARTITIONS_AT_ONCE = 8;

/**
 * A Kafka topic through a consumer group (docs/sources.md). Every relay of
 * the source joins `group`, and the group spreads the partitions over them.
 * Offsets are committed only past records whose acceptance resolved, in
 * order (kafka-batch.ts), so a relay killed or a partition moved mid-batch
 * leaves the rest uncommitted and its next owner reads it again, an ordinary
 * duplicate. A record that can never be an event is recorded dead and passed
 * over like an accepted one, so one poison record does not stop its
 * partition. A crash of the client (brokers unreachable, the group lost) ends
 * the connection; the source loop (source-loop.ts) reconnects with backoff
 * and joins again.
 */
export function kafkaSource(config: KafkaSourceConfig, deps: SourceDeps): Source {
  const logger = deps.logger.child({ source: config.name });
  const slots = new Slots(config.concurrency);
  let consumer: Consumer | undefined;
  let admin: Admin | undefined;
  let joined = false;
  /** Resolves when the consumer stopped, rejects with the error it crashed on. */
  let ended: Promise<void> = Promise.resolve();

  const handle = (session: SourceSession, topic: string, partition: number, m: KafkaMessage): Promise<boolean> => {
    const headers: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(m.headers ?? {})) headers[name] = Array.isArray(value) ? value[0] : value;
    const body = m.value ?? Buffer.alloc(0);
    const derived = deriveEvent(config, { body, headers, key: m.key });
    // Settled by the offset commit of kafka-batch.ts; false (stopping) leaves it uncommitted, read again by the partition's next owner.
    return session.accept(derived, { key: `${topic}:${partition}:${m.offset}`, details: { type: 'kafka', topic, partition, offset: m.offset }, body: body.toString('utf8') });
  };

  const adapter: SourceAdapter = {
    name: config.name,
    origin: 'Kafka',
    /** Connects and joins the group. */
    async connect(session) {
      const kafka = new Kafka(clientConfig(config, logger));
      const c = kafka.consumer({
        groupId: config.group,
        sessionTimeout: config.sessionTimeoutMs,
        heartbeatInterval: config.heartbeatIntervalMs,
        allowAutoTopicCreation: false,
        // A crash ends this connection and the source loop starts a new one, with its backoff and its log.
        retry: { retries: 5, restartOnFailure: async () => false },
      });
      const a = kafka.admin();
      ended = new Promise<void>((resolve, reject) => {
        c.on(c.events.CRASH, (e) => {
          joined = false;
          reject(e.payload.error);
        });
        c.on(c.events.STOP, () => resolve());
      });
      // Observed by consume; a crash before it is not an unhandled rejection meanwhile.
      ended.catch(() => undefined);
      c.on(c.events.GROUP_JOIN, (e) => {
        joined = true;
        deps.metrics.rebalances.inc({ source: config.name });
        const assigned = e.payload.memberAssignment[config.topic] ?? [];
        logger.info({ event: 'source_rebalanced', group: config.group, partitions: assigned }, 'joined the consumer group');
      });
      c.on(c.events.DISCONNECT, () => (joined = false));
      consumer = c;
      admin = a;
      await Promise.all([c.connect(), a.connect()]);
      // Stopped while connecting: nothing to join.
      if (session.stopping) return {};
      await c.subscribe({ topic: config.topic, fromBeginning: true });
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: PARTITIONS_AT_ONCE,
        eachBatch: (payload) =>
          processBatch(payload, { slots, signal: session.signal, handle: (...args) => handle(session, ...args), tickMs: Math.min(config.heartbeatIntervalMs, 1_000), logger }),
      });
      return { topic: config.topic, group: config.group };
    },
    consume: () => ended,
    interrupt: async () => {
      await consumer?.stop().catch(() => undefined);
    },
    async disconnect() {
      const [c, a] = [consumer, admin];
      joined = false;
      admin = undefined;
      // Leaves the group once the batches in hand are done (acceptance aborted), so the others rebalance at once.
      await c?.disconnect().catch(() => undefined);
      await a?.disconnect().catch(() => undefined);
      consumer = undefined;
    },
    reachable: () => joined,
    lag: async () => {
      const byPartition = await partitionLag();
      return byPartition && Object.values(byPartition).reduce((sum, n) => sum + n, 0);
    },
    partitionLag: () => partitionLag(),
  };

  const partitionLag = async (): Promise<Record<string, number> | undefined> => {
    const a = admin;
    if (!a || !joined) return undefined;
    try {
      const [ends, commits] = await Promise.all([a.fetchTopicOffsets(config.topic), a.fetchOffsets({ groupId: config.group, topics: [config.topic] })]);
      const committed = new Map((commits[0]?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
      const out: Record<string, number> = {};
      for (const p of ends) {
        const low = BigInt(p.low);
        const at = committed.get(p.partition) ?? -1n;
        // No commit yet: the group starts at the log's start.
        out[String(p.partition)] = Number(BigInt(p.high) - (at < low ? low : at));
      }
      return out;
    } catch {
      return undefined;
    }
  };

  return sourceLoop(adapter, deps);
}

/** The client's connection settings; its log lines go to the relay's logger with a stable `event`. */
function clientConfig(config: KafkaSourceConfig, logger: Logger): KafkaConfig {
  const clientLog = logger.child({ component: 'kafkajs' });
  return {
    clientId: config.clientId,
    brokers: config.brokers,
    ssl: config.ssl,
    ...(config.sasl ? { sasl: saslOf(config.sasl) } : {}),
    connectionTimeout: 3_000,
    retry: { retries: 5 },
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...fields } = entry.log;
      const line = { event: 'kafka_client', namespace: entry.namespace, ...fields };
      if (entry.level <= logLevel.WARN) clientLog.warn(line, message);
      else clientLog.info(line, message);
    },
  };
}

function saslOf(sasl: NonNullable<KafkaSourceConfig['sasl']>): NonNullable<KafkaConfig['sasl']> {
  const password = sasl.password ?? '';
  const { username } = sasl;
  if (sasl.mechanism === 'plain') return { mechanism: 'plain', username, password };
  if (sasl.mechanism === 'scram-sha-256') return { mechanism: 'scram-sha-256', username, password };
  return { mechanism: 'scram-sha-512', username, password };
}
