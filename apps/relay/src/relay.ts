import { tenantsOf, type SourceConfig } from '@singleshot/config';
import { createTenantMetrics } from '@singleshot/observability';
import { Acceptor } from '@singleshot/intake';
import { addDead } from '@singleshot/queues';
import type { Runtime } from '@singleshot/runtime';
import { MessageStore, SourceStatusStore } from '@singleshot/store';
import { HandOff } from './hand-off';
import { relayMetrics } from './metrics';
import type { Source, SourceDeps } from './source';
import { startStatusReporter } from './status-reporter';

/** What the relay takes from the runtime: the producer path ingest uses, and the DLQ. */
export type RelayRuntime = Pick<Runtime, 'config' | 'logger' | 'metrics' | 'keys' | 'producer' | 'producerQueues' | 'queues' | 'retentionMs' | 'replicaWaits'>;

export interface Relay {
  /** Readiness: each source's origin answers. */
  checks(): Record<string, string>;
  /** True while every source reaches its origin (`/readyz` of `singleshot start`). */
  isRunning(): boolean;
  close(): Promise<void>;
}

/** Makes the source of one `sources:` entry; each type's code (and client library) loads only when configured. */
async function makeSource(config: SourceConfig, deps: SourceDeps): Promise<Source> {
  switch (config.type) {
    case 'redis-streams':
      return (await import('./sources/redis-streams')).redisStreamSource(config, deps);
    case 'postgres-outbox':
      return (await import('./sources/postgres-outbox')).postgresOutboxSource(config, deps);
    case 'rabbitmq':
      return (await import('./sources/rabbitmq')).rabbitmqSource(config, deps);
    case 'nats':
      return (await import('./sources/nats')).natsSource(config, deps);
    case 'kafka':
      return (await import('./sources/kafka')).kafkaSource(config, deps);
  }
}

/**
 * Starts a source for every `sources:` entry. Each hands its messages to the
 * same acceptance as ingest (libs/intake Acceptor, in process: message record,
 * arrivals, decide job, replica WAIT on a cluster) and acknowledges to its
 * origin only after it resolved (docs/sources.md).
 */
export async function startRelay(rt: RelayRuntime, sources: readonly SourceConfig[] = rt.config.sources): Promise<Relay> {
  const logger = rt.logger.child({ component: 'relay' });
  const acceptor = new Acceptor({
    // The fail-fast producer connection, as ingest: while Redis is away an acceptance fails at once and is tried again.
    messages: new MessageStore(rt.producer, rt.keys, { retentionMs: rt.retentionMs }),
    decideQueues: rt.producerQueues,
    keys: rt.keys,
    // On a cluster: no acknowledgement to the origin before the acceptance is on a replica.
    replicas: rt.replicaWaits?.producer,
    enqueueTimeoutMs: rt.config.ingest.enqueueTimeoutMs,
    tenants: createTenantMetrics(rt.metrics.registry, tenantsOf(rt.config)),
  });
  const running: Source[] = [];
  const metrics = relayMetrics(rt.metrics.registry, () =>
    Promise.all(running.map(async (s) => (s.partitionLag ? { source: s.name, lag: undefined, partitions: await s.partitionLag() } : { source: s.name, lag: await s.lag() }))),
  );
  const handOff = new HandOff({
    accept: (message) => acceptor.accept(message),
    addDead: (record) => addDead(rt.queues.dead, record),
    tenants: new Map(sources.flatMap((s) => (s.tenant === undefined ? [] : [[s.name, s.tenant] as const]))),
    metrics,
    logger,
  });
  const abort = new AbortController();
  const deps: SourceDeps = { handOff, logger, metrics, acceptanceDeadlineMs: rt.config.ingest.enqueueTimeoutMs, signal: abort.signal };
  const started: Array<{ source: Source; config: SourceConfig }> = [];
  for (const config of sources) {
    const source = await makeSource(config, deps);
    source.start();
    running.push(source);
    started.push({ source, config });
    logger.info({ event: 'source_started', source: config.name, type: config.type }, 'source started');
  }
  const status = startStatusReporter(new SourceStatusStore(rt.producer, rt.keys), started, logger);
  return {
    checks: () => Object.fromEntries(running.map((s) => [`source-${s.name}`, s.reachable() ? 'ok' : 'unreachable'])),
    isRunning: () => running.every((s) => s.reachable()),
    close: async () => {
      // Hand-offs waiting for Redis give up (their messages stay unacknowledged); accepted ones are acknowledged.
      status.stop();
      abort.abort();
      await Promise.all(running.map((s) => s.stop()));
    },
  };
}
