import type { Logger } from '@singleshot/observability';
import type { FairDispatch } from '@singleshot/queues';

/** The delivery's side of the fair queue between tenants (docs/tenants.md, "Fair share"). */
export interface FairPump {
  /** A worker took a job from the queue `queueQualifiedName`: its partition has room again. */
  kick(queueQualifiedName: string): void;
  stop(): Promise<void>;
}

/**
 * Pumps the fair queues of the partitions this process consumes: when a
 * worker takes a job (room opened where the worker just looked), and every
 * `intervalMs`, which also re-adds what a dead mover left in transit for
 * `staleMs`. A failed pump is logged and the next one repairs it: the jobs
 * stay in the fair queue or in transit, never lost.
 */
export function startFairPump(
  fair: FairDispatch,
  options: { partitions: readonly number[]; qualifiedNames: readonly string[]; intervalMs: number; staleMs: number; logger: Logger },
): FairPump {
  const { logger } = options;
  const byName = new Map(options.qualifiedNames.map((name, p) => [name, p]));
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
    kick(name) {
      const p = byName.get(name);
      if (p !== undefined) fair.pump(p).catch(failed);
    },
    async stop() {
      clearInterval(timer);
      await ticking;
    },
  };
}
