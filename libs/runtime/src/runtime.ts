import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { partitionsOf, waitReplicasOf, type Config } from '@singleshot/config';
import type { DocumentStore } from '@singleshot/documents';
import { createDocumentMetrics, createLogger, createMetrics, type DocumentMetrics, type Logger, type Metrics } from '@singleshot/observability';
import {
  DocumentStateStore,
  KeyBuilder,
  JournalReader,
  MessageStore,
  Cancellations,
  DigestRecords,
  DigestStore,
  OperationStore,
  checkRedisServers,
  createRedis,
  layoutRefusal,
  redisRefusals,
  replicaWaits,
  replicaWaitsEach,
  waitForReplicas,
  type ConnectionRole,
  type RedisClient,
  type RedisConnectionOptions,
  type ReplicaWaits,
} from '@singleshot/store';
import { openQueues, type Queues } from '@singleshot/queues';
import { createDocumentStore } from './document-store-factory';
import { checkLayoutAtStart } from './layout-gate';
import { compileRouteTemplates, type RouteTemplates } from './route-templates';

/**
 * The explicit dependency bag every app is built from (graphile-worker style):
 * config, scoped logger, metrics, Redis connections, stores and queues. Built in
 * plain code by each app's `main.ts`, or once by `singleshot start` for several
 * apps in one process. No container, no magic.
 */
export interface Runtime {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  keys: KeyBuilder;
  /** State scripts and reads; queues commands while reconnecting. */
  redis: RedisClient;
  /** Ingest path: fails fast while Redis is away (answers 503, never a false 2xx). */
  producer: RedisClient;
  operations: OperationStore;
  messages: MessageStore;
  /** Cancels (messages, cancellation keys, operations) as compare-and-sets with the claim. */
  cancellations: Cancellations;
  /** Digest groups: joins, closes, the open list (docs/digests.md). */
  digests: DigestStore;
  /** Closed digests: members and flush operation, for operators and cancels. */
  digestRecords: DigestRecords;
  journal: JournalReader;
  /** Every route's templates, compiled once at start. */
  templates: RouteTemplates;
  /** Render operations (document state, lock, fence) and the waiting marks of operations. */
  documents: DocumentStateStore;
  /** Where generated documents are kept (filesystem or S3). */
  documentStore: DocumentStore;
  documentMetrics: DocumentMetrics;
  /** Queues on the `client` connection (decision and delivery enqueue here). */
  queues: Queues;
  /** Queues on the `producer` connection (ingest enqueues here). */
  producerQueues: Queues;
  /** A new connection for a BullMQ worker or a blocking read; closed by `close()`. */
  connect(role: ConnectionRole, name: string): RedisClient;
  /**
   * The replica waits of each connection, handed to the writers a later step
   * relies on (acceptance, cancels, feedback suppressions, a job's
   * completion, the decision's adds), which then return only once their
   * writes are on a replica; undefined on a single Redis
   * (`redis.cluster.waitReplicas` 0), where they wait for nothing and build
   * no key list. docs/protocol.md, "Replica waits on a Redis Cluster".
   */
  replicaWaits: { client: ReplicaWaits; producer: ReplicaWaits } | undefined;
  /** Unique per process: shows up as the lock owner of operations. */
  workerId: string;
  retentionMs: number;
  close(): Promise<void>;
}

export function retentionMsOf(config: Config): number {
  return Math.round(config.retention.days * 86_400_000);
}

/** Connection options from the config (URL or cluster nodes, password, TLS, natMap). */
export function redisConnectionOptions(config: Config, role: ConnectionRole, name: string): RedisConnectionOptions {
  const cluster = config.redis.cluster;
  return {
    url: config.redis.url,
    role,
    name,
    ...(cluster ? { clusterNodes: cluster.nodes, ...(cluster.natMap ? { natMap: cluster.natMap } : {}) } : {}),
    ...(config.redis.password ? { password: config.redis.password } : {}),
    ...(config.redis.tls ? { tls: config.redis.tls } : {}),
  };
}

/** The key builder of a config: key prefix, shards and queue partitions. */
export function keysOf(config: Config): KeyBuilder {
  return new KeyBuilder(config.redis.keyPrefix, config.redis.shards, partitionsOf(config));
}

/**
 * The replica waits of `connection`, one `WAIT` per call, when the config
 * asks for them (a cluster with `redis.cluster.waitReplicas` ≥ 1); undefined
 * otherwise, and a writer given none waits for nothing.
 */
export function replicaWaitsOf(config: Config, connection: RedisClient): ReplicaWaits | undefined {
  const waitReplicas = waitReplicasOf(config);
  if (waitReplicas <= 0) return undefined;
  const waitTimeoutMs = config.redis.cluster?.waitTimeoutMs ?? 1_000;
  return replicaWaitsEach(connection, (keys, ownersBefore) => waitForReplicas(connection, keys, waitReplicas, waitTimeoutMs, ownersBefore));
}

export async function createRuntime(config: Config, options: { app: string; logger?: Logger; metrics?: Metrics }): Promise<Runtime> {
  // Before any connection: a broken template is a config error, and stops the start.
  const templates = await compileRouteTemplates(config);
  const logger = options.logger ?? createLogger({ app: options.app, level: config.log.level });
  const metrics = options.metrics ?? createMetrics();
  const keys = keysOf(config);
  const waitReplicas = waitReplicasOf(config);
  const waitTimeoutMs = config.redis.cluster?.waitTimeoutMs ?? 1_000;
  const retentionMs = retentionMsOf(config);
  const extra: RedisClient[] = [];
  const connect = (role: ConnectionRole, name: string): RedisClient => {
    const connection = createRedis(redisConnectionOptions(config, role, `singleshot:${options.app}:${name}`));
    extra.push(connection);
    return connection;
  };
  const redis = connect('client', 'client');
  const producer = connect('producer', 'producer');
  let lastState = '';
  for (const [label, connection] of [['client', redis], ['producer', producer]] as const) {
    connection.on('error', (err: Error) => {
      const state = `${label}:${(err as { code?: string }).code ?? err.name}`;
      if (state !== lastState) logger.warn({ event: 'redis_connection_error', connection: label, err: { code: (err as { code?: string }).code, message: err.message } }, 'redis connection error');
      lastState = state;
    });
    connection.on('ready', () => {
      if (lastState) logger.info({ event: 'redis_connection_ready', connection: label }, 'redis connection ready');
      lastState = '';
    });
  }

  if (config.redis.checkOnStart) {
    try {
      for (const { node, version, problems } of await checkRedisServers(redis, waitReplicas)) {
        for (const problem of problems) logger.warn({ event: 'redis_config_problem', redisVersion: version, redisNode: node }, problem);
      }
    } catch (err) {
      logger.warn({ event: 'redis_config_check_failed', err }, 'could not check the Redis server configuration');
    }
  }

  // Before any queue or store is used: a layout this code does not know is never acted on.
  try {
    await checkLayoutAtStart(redis, keys, logger);
  } catch (err) {
    await Promise.allSettled(extra.map((c) => c.quit().catch(() => c.disconnect())));
    throw err;
  }

  const queues = openQueues(redis, keys);
  const producerQueues = openQueues(producer, keys);
  // Read on scrape (cached 2 s by the metrics lib), so a scrape storm cannot hammer Redis.
  // One series per queue, summed over its partitions.
  metrics.setQueueSource(async () =>
    Promise.all(
      (['decide', 'deliver', 'render'] as const).map(async (name) => {
        const list = name === 'decide' ? queues.decideAll : name === 'deliver' ? queues.deliverAll : [queues.render];
        const all = await Promise.all(list.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'failed')));
        const sum = (state: string) => all.reduce((n, c) => n + (c[state] ?? 0), 0);
        return { queue: name, counts: { waiting: sum('waiting'), active: sum('active'), delayed: sum('delayed'), failed: sum('failed') } };
      }),
    ),
  );
  metrics.setRedisBackoffSource(() => redisRefusals.backoffSeconds());
  metrics.setLayoutSource(() => layoutRefusal.refused() !== undefined);
  layoutRefusal.onRefused((held) =>
    logger.error({ event: 'layout_upgrade_required', held }, `Redis holds layout ${held}, newer than this process: it takes no more work until it is replaced by a newer version`),
  );
  metrics.setDlqSource(async () => [{ queue: queues.dead.name, depth: await queues.dead.getWaitingCount() }]);
  const documents = new DocumentStateStore(redis, keys, { retentionMs });
  const documentMetrics = createDocumentMetrics(metrics.registry);
  metrics.setStoredWaitingSource(async () => ({ document: await documents.waitingCount() }));
  const documentStore = createDocumentStore(config.documents.store);
  const clientWaits = replicaWaitsOf(config, redis);
  const producerWaits = replicaWaitsOf(config, producer);
  return {
    config,
    logger,
    metrics,
    keys,
    redis,
    producer,
    // A claim that goes and a lease extension return only once on a replica (a cluster with waitReplicas).
    operations: new OperationStore(redis, keys, {
      retentionMs,
      ...(waitReplicas > 0 ? { replicas: replicaWaits(redis, (written) => waitForReplicas(redis, written, waitReplicas, waitTimeoutMs)) } : {}),
    }),
    messages: new MessageStore(redis, keys, { retentionMs }),
    cancellations: new Cancellations(redis, keys, { retentionMs }),
    digests: new DigestStore(redis, keys, { retentionMs }),
    digestRecords: new DigestRecords(redis, keys, { retentionMs }),
    journal: new JournalReader(redis, keys),
    templates,
    documents,
    documentStore,
    documentMetrics,
    queues,
    producerQueues,
    connect,
    replicaWaits: clientWaits && producerWaits ? { client: clientWaits, producer: producerWaits } : undefined,
    workerId: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    retentionMs,
    close: async () => {
      await Promise.allSettled([queues.close(), producerQueues.close(), documentStore.close()]);
      await Promise.allSettled(extra.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
