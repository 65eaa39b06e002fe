import { Counter, type Registry } from 'prom-client';

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
  /** One operation sent (committed `sent`). */
  sent(tenant: string | undefined, channel: string): void;
}

const byRegistry = new WeakMap<Registry, { messages: Counter<'tenant' | 'result'>; sends: Counter<'tenant' | 'channel'> }>();

/** The tenant counters of `registry` (registered once), labelled for `tenants`, the configured ones. */
export function createTenantMetrics(registry: Registry, tenants: readonly string[]): TenantMetrics {
  let counters = byRegistry.get(registry);
  if (!counters) {
    const registers = [registry];
    counters = {
      messages: new Counter({ name: 'singleshot_tenant_messages_total', help: 'Arrivals answered by acceptance, by tenant and result (accepted, duplicate).', labelNames: ['tenant', 'result'], registers }),
      sends: new Counter({ name: 'singleshot_tenant_sends_total', help: 'Operations sent, by tenant and channel.', labelNames: ['tenant', 'channel'], registers }),
    };
    byRegistry.set(registry, counters);
  }
  const { messages, sends } = counters;
  const named = new Set(tenants.slice(0, TENANT_LABELS_MAX));
  const label = (tenant: string | undefined) => (tenant === undefined || tenant === 'default' ? 'default' : named.has(tenant) ? tenant : 'other');
  // Label children looked up once per label pair: these count every notification.
  const arrivals = new Map<string, Record<'accepted' | 'duplicate', Counter.Internal>>();
  const sent = new Map<string, Map<string, Counter.Internal>>();
  return {
    arrived(tenant, result) {
      const t = label(tenant);
      let children = arrivals.get(t);
      if (!children) arrivals.set(t, (children = { accepted: messages.labels(t, 'accepted'), duplicate: messages.labels(t, 'duplicate') }));
      children[result].inc();
    },
    sent(tenant, channel) {
      const t = label(tenant);
      let byChannel = sent.get(t);
      if (!byChannel) sent.set(t, (byChannel = new Map()));
      let child = byChannel.get(channel);
      if (!child) byChannel.set(channel, (child = sends.labels(t, channel)));
      child.inc();
    },
  };
}
