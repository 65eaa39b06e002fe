import { DEFAULT_TENANT } from '@singleshot/core';
import { fairShareOn, maxPendingsOf, tenantsOf, weightsOf, type Config } from '@singleshot/config';
import type { FairQueue } from '@singleshot/store';

/** One tenant as `GET /tenants` and the tenants page show it. */
export interface TenantRow {
  tenant: string;
  weight: number;
  /** Its `maxPending`; null: no bound. */
  maxPending: number | null;
  /** Deliver jobs waiting in the fair queues, every partition. */
  waiting: number;
  /** At its `maxPending`: its events answer 429 until the backlog shrinks. */
  atLimit: boolean;
}

/** What `GET /tenants` answers. */
export interface TenantsAnswer {
  fairShare: boolean;
  /** `tenancy.window`: operations moved on to a partition's queue and not yet started, at most. */
  window: number;
  tenants: TenantRow[];
}

/**
 * The tenants the config names, the default tenant first, each with its
 * weight, bound and backlog; a tenant found waiting that the config no longer
 * names is listed too, with the defaults, so no backlog hides.
 */
export function tenantsView(config: Pick<Config, 'ingest' | 'mailboxes' | 'sources' | 'tenancy' | 'routes'>, fair: Pick<FairQueue, 'waitingIn'>, partitions: number): { read(): Promise<TenantsAnswer> } {
  const fairShare = fairShareOn(config);
  const weightOf = weightsOf(config);
  const maxPendingOf = maxPendingsOf(config);
  const named = [DEFAULT_TENANT, ...tenantsOf(config).filter((t) => t !== DEFAULT_TENANT)];
  return {
    async read() {
      const waiting = fairShare ? await fair.waitingIn(Array.from({ length: partitions }, (_, p) => p)) : new Map<string, number>();
      const all = [...named, ...[...waiting.keys()].filter((t) => !named.includes(t)).sort()];
      const tenants = all.map((tenant) => {
        const maxPending = maxPendingOf(tenant) ?? null;
        const n = waiting.get(tenant) ?? 0;
        return { tenant, weight: weightOf(tenant), maxPending, waiting: n, atLimit: maxPending !== null && n >= maxPending };
      });
      return { fairShare, window: config.tenancy.window, tenants };
    },
  };
}
