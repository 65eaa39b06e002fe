import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { TENANT_LABELS_MAX, createTenantMetrics } from './tenant-metrics';

// The tenant label stays bounded by the config: an unknown tenant, or one past
// the first TENANT_LABELS_MAX configured, counts as `other`.
describe('createTenantMetrics', () => {
  it('labels the default tenant, the configured ones up to the limit, and `other` for the rest', async () => {
    const registry = new Registry();
    const configured = Array.from({ length: TENANT_LABELS_MAX + 1 }, (_, i) => `t${i}`);
    const tenants = createTenantMetrics(registry, configured);
    tenants.arrived(undefined, 'accepted');
    tenants.arrived('t0', 'accepted');
    tenants.arrived('t0', 'duplicate');
    tenants.arrived(`t${TENANT_LABELS_MAX}`, 'accepted');
    tenants.arrived('never-configured', 'accepted');
    tenants.sent('t1', 'email');
    tenants.sent('t1', 'email');
    const samples = (await registry.getMetricsAsJSON()).flatMap((m) => m.values.map((v) => ({ name: m.name, labels: v.labels, value: v.value })));
    expect(samples).toEqual(
      expect.arrayContaining([
        { name: 'singleshot_tenant_messages_total', labels: { tenant: 'default', result: 'accepted' }, value: 1 },
        { name: 'singleshot_tenant_messages_total', labels: { tenant: 't0', result: 'accepted' }, value: 1 },
        { name: 'singleshot_tenant_messages_total', labels: { tenant: 't0', result: 'duplicate' }, value: 1 },
        { name: 'singleshot_tenant_messages_total', labels: { tenant: 'other', result: 'accepted' }, value: 2 },
        { name: 'singleshot_tenant_sends_total', labels: { tenant: 't1', channel: 'email' }, value: 2 },
      ]),
    );
    expect(samples.some((s) => s.labels.tenant === `t${TENANT_LABELS_MAX}` || s.labels.tenant === 'never-configured')).toBe(false);
  });

  it('reads the jobs waiting per tenant at scrape time, under the same bounded labels', async () => {
    const registry = new Registry();
    const tenants = createTenantMetrics(registry, ['acme']);
    tenants.setWaitingSource(async () => new Map([['default', 2], ['acme', 5], ['stranger', 3], ['another', 4]]));
    const gauge = (await registry.getMetricsAsJSON()).find((m) => m.name === 'singleshot_tenant_waiting');
    expect(gauge?.values.map((v) => [v.labels.tenant, v.value]).sort()).toEqual([
      ['acme', 5],
      ['default', 2],
      ['other', 7],
    ]);
  });

  it('keeps the latency per tenant only when the config names a tenant', async () => {
    const count = async (registry: Registry) =>
      (await registry.getMetricsAsJSON()).find((m) => m.name === 'singleshot_tenant_end_to_end_seconds')?.values.filter((v) => (v as { metricName?: string }).metricName === 'singleshot_tenant_end_to_end_seconds_count').map((v) => [v.labels.tenant, v.value]);
    const withTenants = new Registry();
    const named = createTenantMetrics(withTenants, ['acme']);
    named.sent('acme', 'email', 0.2);
    named.sent(undefined, 'email', 0.1);
    named.sent('acme', 'email');
    expect(await count(withTenants)).toEqual([
      ['acme', 1],
      ['default', 1],
    ]);
    const without = new Registry();
    createTenantMetrics(without, []).sent(undefined, 'email', 0.1);
    expect(await count(without)).toEqual([]);
  });

  it('registers its counters once per registry', () => {
    const registry = new Registry();
    createTenantMetrics(registry, []);
    expect(() => createTenantMetrics(registry, ['a'])).not.toThrow();
  });
});
