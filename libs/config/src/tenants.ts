import type { Config } from './schema';

/**
 * The tenants a config names (docs/tenants.md): of its producer keys, then its
 * mailboxes, then its sources, then `tenancy.tenants`, each once, in that order.
 */
export function tenantsOf(config: Pick<Config, 'ingest' | 'mailboxes' | 'sources'> & { tenancy?: Pick<Config['tenancy'], 'tenants'> }): string[] {
  const named = [...config.ingest.apiKeys, ...config.mailboxes, ...config.sources].map((c) => c.tenant);
  for (const t of config.tenancy?.tenants ?? []) named.push(t.id);
  return [...new Set(named.filter((t): t is string => t !== undefined))];
}

/** Whether deliver jobs go through the fair queue (`tenancy.fairShare`): `auto` when a tenant or a `bulk` route is configured. */
export function fairShareOn(config: Pick<Config, 'ingest' | 'mailboxes' | 'sources' | 'tenancy' | 'routes'>): boolean {
  const { fairShare } = config.tenancy;
  return fairShare === 'on' || (fairShare === 'auto' && (tenantsOf(config).length > 0 || config.routes.some((r) => r.priority === 'bulk')));
}

/** A tenant's weight: its `tenancy.tenants` entry's, else 1. */
export function weightsOf(config: Pick<Config, 'tenancy'>): (tenant: string) => number {
  const weights = new Map(config.tenancy.tenants.map((t) => [t.id, t.weight]));
  return (tenant) => weights.get(tenant) ?? 1;
}

/** A tenant's in-flight cap (`tenancy.tenants[].maxInFlight`), undefined for none. */
export function capsOf(config: Pick<Config, 'tenancy'>): (tenant: string) => number | undefined {
  return boundOf(config, 'maxInFlight');
}

/** A tenant's bound on waiting jobs (`tenancy.tenants[].maxPending`), undefined for none. */
export function maxPendingsOf(config: Pick<Config, 'tenancy'>): (tenant: string) => number | undefined {
  return boundOf(config, 'maxPending');
}

function boundOf(config: Pick<Config, 'tenancy'>, field: 'maxInFlight' | 'maxPending'): (tenant: string) => number | undefined {
  const bounds = new Map(config.tenancy.tenants.flatMap((t) => (t[field] === undefined ? [] : [[t.id, t[field]] as const])));
  return (tenant) => bounds.get(tenant);
}
