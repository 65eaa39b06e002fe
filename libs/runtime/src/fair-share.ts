import { capsOf, fairShareOn, weightsOf } from '@singleshot/config';
import { FairDispatch } from '@singleshot/queues';
import { FairQueue } from '@singleshot/store';
import type { Runtime } from './runtime';

/** How long a capped operation moved to the queue holds its place before any worker starts it. */
const MOVED_DEADLINE_MS = 600_000;

/**
 * The fair queue between tenants of a config (`tenancy.fairShare`), or
 * undefined when deliver jobs go to the queue first in, first out. The
 * decision offers fan-outs to it; the delivery pumps it.
 */
export function fairDispatchOf(rt: Pick<Runtime, 'config' | 'redis' | 'keys' | 'queues'>): FairDispatch | undefined {
  if (!fairShareOn(rt.config)) return undefined;
  const former = rt.config.redis.formerPartitions;
  // A capped operation whose worker died holds its place past its lease and the
  // stalled-job recovery that runs it again (its start renews the deadline).
  const deadlines = { startedMs: 2 * rt.config.delivery.leaseMs, movedMs: MOVED_DEADLINE_MS };
  return new FairDispatch(rt.queues, {
    queue: new FairQueue(rt.redis, rt.keys, Date.now, deadlines),
    window: rt.config.tenancy.window,
    weightOf: weightsOf(rt.config),
    capOf: capsOf(rt.config),
    batchMax: rt.config.delivery.batchMax,
    ...(former !== undefined && former !== rt.keys.partitions ? { former: { queue: new FairQueue(rt.redis, rt.keys.withPartitions(former), Date.now, deadlines), partitions: former } } : {}),
  });
}
