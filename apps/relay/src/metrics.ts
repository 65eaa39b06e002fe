import { Counter, Gauge, type Registry } from 'prom-client';

/** What a source counts per message: the four endings of a hand-off attempt. */
export type MessageResult = 'accepted' | 'duplicate' | 'invalid' | 'retry';

/** The relay's metrics (docs/sources.md, "Operations"). */
export interface RelayMetrics {
  /** One sample per message ending (`accepted`, `duplicate`, `invalid`) and per failed acceptance attempt (`retry`). */
  messages: Counter<'source' | 'result'>;
  /** Work waiting at each origin: outbox rows, queue depth, stream pending plus undelivered, consumer pending. */
  lag: Gauge<'source'>;
}

/**
 * Registers the relay's metrics in `registry` once (several relays in one
 * process share them). `lagOf` is read at scrape time; a source that cannot
 * reach its origin reports no sample rather than a stale one.
 */
export function relayMetrics(registry: Registry, lagOf: () => Promise<Array<{ source: string; lag: number | undefined }>>): RelayMetrics {
  const existingMessages = registry.getSingleMetric('singleshot_source_messages_total') as Counter<'source' | 'result'> | undefined;
  const existingLag = registry.getSingleMetric('singleshot_source_lag') as Gauge<'source'> | undefined;
  if (existingMessages && existingLag) return { messages: existingMessages, lag: existingLag };
  const messages = new Counter<'source' | 'result'>({
    name: 'singleshot_source_messages_total',
    help: 'Messages read from sources, by source and result (accepted, duplicate, invalid, retry)',
    labelNames: ['source', 'result'],
    registers: [registry],
  });
  const lag = new Gauge<'source'>({
    name: 'singleshot_source_lag',
    help: 'Messages waiting at each source\'s origin (outbox rows, queue depth, stream or consumer pending)',
    labelNames: ['source'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { source, lag: value } of await lagOf()) if (value !== undefined) this.set({ source }, value);
    },
  });
  return { messages, lag };
}
