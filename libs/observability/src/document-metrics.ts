import { Counter, Histogram, type Registry } from 'prom-client';
import { DURATION_BUCKETS } from './metrics';

/** Metrics of documents (render operations); the operations waiting for them are in `singleshot_operations_waiting{reason="document"}`. */
export interface DocumentMetrics {
  /** Render attempts by result: stored, retry, dead (failed for good), duplicate (already stored). */
  renders: Counter<'format' | 'result'>;
  renderDuration: Histogram<'format'>;
}

const byRegistry = new WeakMap<Registry, DocumentMetrics>();

/** Registers the document metrics in `registry` once (the same object on every call). */
export function createDocumentMetrics(registry: Registry): DocumentMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const metrics: DocumentMetrics = {
    renders: new Counter({ name: 'singleshot_document_renders_total', help: 'Document render attempts by result.', labelNames: ['format', 'result'], registers }),
    renderDuration: new Histogram({
      name: 'singleshot_document_render_seconds',
      help: 'Duration of one document generation and store.',
      labelNames: ['format'],
      buckets: DURATION_BUCKETS,
      registers,
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
