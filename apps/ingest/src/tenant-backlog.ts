import { DEFAULT_TENANT } from '@singleshot/core';
import type { FairQueue } from '@singleshot/store';

/** How full a tenant's backlog is, when it has a `maxPending`. */
export interface BacklogFull {
  tenant: string;
  waiting: number;
  maxPending: number;
}

/**
 * The tenants' `maxPending` (docs/tenants.md): a tenant with that many deliver
 * jobs waiting in the fair queues gets 429 for its next event. Read when the
 * event arrives, one small read per partition, only for a tenant with a bound.
 */
export class TenantBacklog {
  constructor(
    private readonly fair: FairQueue,
    private readonly partitions: number,
    private readonly maxPendingOf: (tenant: string) => number | undefined,
    private readonly onError: (err: unknown) => void,
  ) {}

  /**
   * The tenant's backlog when it is at its bound, else undefined. A failed
   * read is undefined too: acceptance itself answers 503 while Redis is away,
   * and a bound must not turn a working Redis's hiccup into refused events.
   */
  async full(tenant: string | undefined): Promise<BacklogFull | undefined> {
    const id = tenant ?? DEFAULT_TENANT;
    const maxPending = this.maxPendingOf(id);
    if (maxPending === undefined) return undefined;
    try {
      const counts = await Promise.all(Array.from({ length: this.partitions }, (_, p) => this.fair.waitingOf(p, id)));
      const waiting = counts.reduce((a, b) => a + b, 0);
      return waiting >= maxPending ? { tenant: id, waiting, maxPending } : undefined;
    } catch (err) {
      this.onError(err);
      return undefined;
    }
  }
}
