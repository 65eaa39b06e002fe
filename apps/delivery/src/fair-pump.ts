import type { Logger } from '@singleshot/observability';
import type { DeliverJobData } from '@singleshot/core';
import type { FairDispatch } from '@singleshot/queues';

/** The delivery's side of the fair queue between tenants (docs/tenants.md, "Fair share"). */
export interface FairPump {
  /** A worker starts an operation that came out of the fair queue (`moved`): its place in the window is free. */
  started(op: Pick<DeliverJobData, 'operationKey' | 'tenant'>): void;
  /** Its attempt ended for good (not one that runs again): a capped tenant's place is free. */
  ended(op: Pick<DeliverJobData, 'operationKey' | 'tenant'>): void;
  stop(): Promise<void>;
}

/**
 * Pumps the fair queues of the partitions this process consumes: when a
 * worker starts an operation that came out of one (its place in the window
 * is free), and every `intervalMs`, which also re-adds what a dead mover left
 * in transit for `staleMs`. A failed pump is logged and the next one repairs
 * it: the jobs stay in the fair queue or in transit, never lost.
 */
export function startFairPump(
  fair: FairDispatch,
  options: { partitions: readonly number[]; intervalMs: number; staleMs: number; logger: Logger },
): FairPump {
  const { logger } = options;
  const failed = (err: unknown) => logger.warn({ event: 'fair_pump_failed', err }, 'fair queue pump failed; the next one retries');
  let ticking: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    ticking = Promise.all(options.partitions.map((p) => fair.pump(p).then(() => fair.recover(p, options.staleMs)))).then((counts) => {
      const recovered = counts.reduce((a, b) => a + b, 0);
      if (recovered > 0) logger.info({ event: 'fair_transit_recovered', jobs: recovered }, 'jobs left in transit by a stopped mover added again');
    }, failed);
  }, options.intervalMs);
  timer.unref();
  return {
    started(op) {
      fair.started(op).catch(failed);
    },
    ended(op) {
      fair.ended(op).catch(failed);
    },
    async stop() {
      clearInterval(timer);
      await ticking;
    },
  };
}
