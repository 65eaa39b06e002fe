import { Counter, Gauge, type Registry } from 'prom-client';

/** What a source counts per message: the four endings of a hand-off attempt. */
export type MessageResult = 'accepted' | 'duplicate' | 'invalid' | 'retry';

/** The relay's metrics (docs/sources.md, "Operations"). */
export interface RelayMetrics {
  /** One sample per message ending (`accepted`, `duplicate`, `invalid`) and per failed acceptance attempt (`retry`). */
  messages: Counter<'source' | 'result'>;
  /** Work waiting at each origin: outbox rows, queue depth, stream pending plus undelivered, consumer pending, per partition for Kafka. */
  lag: Gauge<'source' | 'partition'>;
  /** Consumer group generations a relay joined (Kafka): each is a rebalance of the partitions. */
  rebalances: Counter<'source'>;
}

/** One source's lag: a total, or one figure per partition (then the total is their sum). */
export interface SourceLag {
  source: string;
  lag: number | undefined;
  partitions?: Record<string, number> | undefined;
}

/**
 * Registers the relay's metrics in `registry` once (several relays in one
 * process share them). `lagOf` is read at scrape time; a source that cannot
 * reach its origin reports no sample rather than a stale one. A source with
 * partitions reports one sample per partition and none for the total, so
 * `sum by (source)` is its lag like any other source's.
 */
export function relayMetrics(registry: Registry, lagOf: () => Promise<SourceLag[]>): RelayMetrics {
  const existingMessages = registry.getSingleMetric('singleshot_source_messages_total') as Counter<'source' | 'result'> | undefined;
  const existingLag = registry.getSingleMetric('singleshot_source_lag') as Gauge<'source' | 'partition'> | undefined;
  const existingRebalances = registry.getSingleMetric('singleshot_source_rebalances_total') as Counter<'source'> | undefined;
  if (existingMessages && existingLag && existingRebalances) return { messages: existingMessages, lag: existingLag, rebalances: existingRebalances };
  const messages = new Counter<'source' | 'result'>({
    name: 'singleshot_source_messages_total',
    help: 'Messages read from sources, by source and result (accepted, duplicate, invalid, retry)',
    labelNames: ['source', 'result'],
    registers: [registry],
  });
  const lag = new Gauge<'source' | 'partition'>({
    name: 'singleshot_source_lag',
    help: 'Messages waiting at each source\'s origin (outbox rows, queue depth, stream or consumer pending; per partition for Kafka)',
    labelNames: ['source', 'partition'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { source, lag: value, partitions } of await lagOf()) {
        if (partitions) for (const [partition, n] of Object.entries(partitions)) this.set({ source, partition }, n);
        else if (value !== undefined) this.set({ source }, value);
      }
    },
  });
  const rebalances = new Counter<'source'>({
    name: 'singleshot_source_rebalances_total',
    help: 'Consumer group generations this relay joined, by source (Kafka): each one is a rebalance of the partitions',
    labelNames: ['source'],
    registers: [registry],
  });
  return { messages, lag, rebalances };
}
