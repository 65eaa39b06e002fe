import { fairShareOn, weightsOf } from '@singleshot/config';
import { FairDispatch } from '@singleshot/queues';
import { FairQueue } from '@singleshot/store';
import type { Runtime } from './runtime';

/**
 * The fair queue between tenants of a config (`tenancy.fairShare`), or
 * undefined when deliver jobs go to the queue first in, first out. The
 * decision offers fan-outs to it; the delivery pumps it.
 */
export function fairDispatchOf(rt: Pick<Runtime, 'config' | 'redis' | 'keys' | 'queues'>): FairDispatch | undefined {
  if (!fairShareOn(rt.config)) return undefined;
  const former = rt.config.redis.formerPartitions;
  return new FairDispatch(rt.queues, {
    queue: new FairQueue(rt.redis, rt.keys),
    window: rt.config.tenancy.window,
    weightOf: weightsOf(rt.config),
    batchMax: rt.config.delivery.batchMax,
    ...(former !== undefined && former !== rt.keys.partitions ? { former: { queue: new FairQueue(rt.redis, rt.keys.withPartitions(former)), partitions: former } } : {}),
  });
}
