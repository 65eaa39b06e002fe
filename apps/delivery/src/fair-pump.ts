import type { Logger } from '@singleshot/observability';
import { partitionOf } from '@singleshot/core';
import type { FairDispatch } from '@singleshot/queues';

/** The delivery's side of the fair queue between tenants (docs/tenants.md, "Fair share"). */
export interface FairPump {
  /** A worker started an operation that came out of the fair queue (`moved`): its place in the window is free. */
  started(operationKey: string): void;
  stop(): Promise<void>;
}

/**
 * Pumps the fair queues of the partitions this process consumes: when a
 * worker starts an operation that came out of one (its place in the window
 * is free), and every
 * `intervalMs`, which also re-adds what a dead mover left in transit for
 * `staleMs`. A failed pump is logged and the next one repairs it: the jobs
 * stay in the fair queue or in transit, never lost.
 */
export function startFairPump(
  fair: FairDispatch,
  options: { partitions: readonly number[]; partitionCount: number; intervalMs: number; staleMs: number; logger: Logger },
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
    started(operationKey) {
      fair.pump(partitionOf(operationKey, options.partitionCount), 1).catch(failed);
    },
    async stop() {
      clearInterval(timer);
      await ticking;
    },
  };
}
