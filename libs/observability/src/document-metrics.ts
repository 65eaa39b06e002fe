import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { cachedSource, type SourceOptions, type SourceResult } from './cached-source';
import { DURATION_BUCKETS } from './metrics';

/** Metrics of documents (render operations) and of the operations waiting for them. */
export interface DocumentMetrics {
  /** Render attempts by result: stored, retry, dead (failed for good), duplicate (already stored). */
  renders: Counter<'format' | 'result'>;
  renderDuration: Histogram<'format'>;
  /** Operations waiting, by reason (`document`), read at scrape time. */
  operationsWaiting: Gauge<'reason'>;
  setWaitingSource(fetch: () => Promise<Record<string, number>>, options?: SourceOptions): void;
}

const byRegistry = new WeakMap<Registry, DocumentMetrics>();

/** Registers the document metrics in `registry` once (the same object on every call). */
export function createDocumentMetrics(registry: Registry): DocumentMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  let waitingSource: (() => Promise<SourceResult<Record<string, number>>>) | undefined;
  const metrics: DocumentMetrics = {
    renders: new Counter({ name: 'singleshot_document_renders_total', help: 'Document render attempts by result.', labelNames: ['format', 'result'], registers }),
    renderDuration: new Histogram({
      name: 'singleshot_document_render_seconds',
      help: 'Duration of one document generation and store.',
      labelNames: ['format'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    operationsWaiting: new Gauge<'reason'>({
      name: 'singleshot_operations_waiting',
      help: 'Operations waiting before they may be sent, by reason (document), read at scrape time (cached 2 s).',
      labelNames: ['reason'],
      registers,
      async collect() {
        if (!waitingSource) return;
        const result = await waitingSource();
        this.reset();
        if (!result.ok) return;
        for (const [reason, n] of Object.entries(result.value)) this.set({ reason }, n);
      },
    }),
    setWaitingSource(fetch, options) {
      waitingSource = cachedSource(fetch, options);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
