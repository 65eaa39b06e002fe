import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { END_TO_END_BUCKETS } from './metrics';
import { cachedSource, type SourceResult } from './cached-source';

/** The most tenants that get a label of their own; the rest share `other`, so the label set stays bounded. */
export const TENANT_LABELS_MAX = 100;

/**
 * Per-tenant counts (docs/tenants.md). The label is the tenant for the
 * default tenant and the first `TENANT_LABELS_MAX` configured ones, `other`
 * for any other: a label set bounded by the config, not by what arrives.
 */
export interface TenantMetrics {
  /** One arrival that acceptance answered: `accepted` (a new message, what a tenant is charged for) or `duplicate`. */
  arrived(tenant: string | undefined, result: 'accepted' | 'duplicate'): void;
  /**
   * One operation sent (committed `sent`), `seconds` after its message first
   * arrived (absent for a send found by reconciliation, whose time is not the
   * send's). The latency is kept per tenant only when the config names one.
   */
  sent(tenant: string | undefined, channel: string, seconds?: number): void;
  /** Where `singleshot_tenant_waiting` comes from: jobs per tenant in the fair queues (read at scrape time, cached). */
  setWaitingSource(fetch: () => Promise<ReadonlyMap<string, number>>): void;
}

interface TenantCollectors {
  messages: Counter<'tenant' | 'result'>;
  sends: Counter<'tenant' | 'channel'>;
  latency: Histogram<'tenant'>;
  /** The label of a tenant and the source of the waiting gauge: the last process-wide call's. */
  waiting: { source?: () => Promise<SourceResult<ReadonlyMap<string, number>>>; label: (tenant: string) => string };
}

const byRegistry = new WeakMap<Registry, TenantCollectors>();

/** The tenant counters of `registry` (registered once), labelled for `tenants`, the configured ones. */
export function createTenantMetrics(registry: Registry, tenants: readonly string[]): TenantMetrics {
  let counters = byRegistry.get(registry);
  if (!counters) {
    const registers = [registry];
    const waiting: TenantCollectors['waiting'] = { label: (t) => t };
    new Gauge({
      name: 'singleshot_tenant_waiting',
      help: 'Deliver jobs waiting in the fair queues between tenants, by tenant, read at scrape time: those of the partitions this process pumps.',
      labelNames: ['tenant'],
      registers,
      async collect() {
        if (!waiting.source) return;
        const result = await waiting.source();
        this.reset();
        if (!result.ok) return;
        const sums = new Map<string, number>();
        for (const [tenant, n] of result.value) sums.set(waiting.label(tenant), (sums.get(waiting.label(tenant)) ?? 0) + n);
        for (const [tenant, n] of sums) this.set({ tenant }, n);
      },
    });
    counters = {
      waiting,
      messages: new Counter({ name: 'singleshot_tenant_messages_total', help: 'Arrivals answered by acceptance, by tenant and result (accepted, duplicate).', labelNames: ['tenant', 'result'], registers }),
      latency: new Histogram({ name: 'singleshot_tenant_end_to_end_seconds', help: 'First arrival of a message to provider acceptance of its notification, by tenant (kept when the config names a tenant).', labelNames: ['tenant'], buckets: END_TO_END_BUCKETS, registers }),
      sends: new Counter({ name: 'singleshot_tenant_sends_total', help: 'Operations sent, by tenant and channel.', labelNames: ['tenant', 'channel'], registers }),
    };
    byRegistry.set(registry, counters);
  }
  const { messages, sends, waiting, latency } = counters;
  const named = new Set(tenants.slice(0, TENANT_LABELS_MAX));
  const label = (tenant: string | undefined) => (tenant === undefined || tenant === 'default' ? 'default' : named.has(tenant) ? tenant : 'other');
  waiting.label = label;
  // Label children looked up once per label pair: these count every notification.
  const arrivals = new Map<string, Record<'accepted' | 'duplicate', Counter.Internal>>();
  const sent = new Map<string, Map<string, Counter.Internal>>();
  const latencies = new Map<string, Histogram.Internal<'tenant'>>();
  return {
    arrived(tenant, result) {
      const t = label(tenant);
      let children = arrivals.get(t);
      if (!children) arrivals.set(t, (children = { accepted: messages.labels(t, 'accepted'), duplicate: messages.labels(t, 'duplicate') }));
      children[result].inc();
    },
    sent(tenant, channel, seconds) {
      const t = label(tenant);
      // Without tenants the deployment-wide singleshot_end_to_end_seconds says the same: nothing more per send.
      if (seconds !== undefined && named.size > 0) {
        let child = latencies.get(t);
        if (!child) latencies.set(t, (child = latency.labels(t)));
        child.observe(seconds);
      }
      let byChannel = sent.get(t);
      if (!byChannel) sent.set(t, (byChannel = new Map()));
      let child = byChannel.get(channel);
      if (!child) byChannel.set(channel, (child = sends.labels(t, channel)));
      child.inc();
    },
    setWaitingSource(fetch) {
      waiting.source = cachedSource(fetch);
    },
  };
}
