import { Counter, Gauge, type Registry } from 'prom-client';
import { cachedSource, type SourceResult } from './cached-source';

/** Metrics of digests (docs/digests.md). */
export interface DigestMetrics {
  /** Members that joined a digest (first joins only: a duplicate arrival adds nothing). */
  items: Counter<'route'>;
  /** Digests whose flush operation was enqueued, by why they closed: window, max_items, bytes. */
  flushed: Counter<'reason'>;
  /** Where `singleshot_digests_open` comes from (read at scrape time, cached). */
  setOpenSource(fetch: () => Promise<number>): void;
}

const byRegistry = new WeakMap<Registry, DigestMetrics>();

/** Registers the digest metrics in `registry` once (the same object on every call). */
export function createDigestMetrics(registry: Registry): DigestMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  let openSource: (() => Promise<SourceResult<number>>) | undefined;
  new Gauge({
    name: 'singleshot_digests_open',
    help: 'Digests open (gathering members), read at scrape time.',
    registers,
    async collect() {
      if (!openSource) return;
      const result = await openSource();
      this.reset();
      if (result.ok) this.set(result.value);
    },
  });
  const metrics: DigestMetrics = {
    items: new Counter({ name: 'singleshot_digest_items_total', help: 'Members that joined a digest, by route.', labelNames: ['route'], registers }),
    flushed: new Counter({ name: 'singleshot_digests_flushed_total', help: 'Digests flushed (their one operation enqueued), by why they closed.', labelNames: ['reason'], registers }),
    setOpenSource(fetch) {
      openSource = cachedSource(fetch);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
