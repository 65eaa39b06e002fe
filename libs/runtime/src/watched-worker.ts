import type { Job, Processor, WorkerOptions } from 'bullmq';
import { RefusalAwareWorker } from './refusal-aware-worker';

/**
 * A BullMQ worker that notes every sign of life of its fetch loop: a fetch
 * (`moveToActive`) that came back, a job that started or ended. A loop that
 * has free slots and shows none of these for a while is stuck, not idle: an
 * idle worker still fetches once per blocking wait (at most BullMQ's 10 s
 * block plus its 1 s watchdog).
 */
export class WatchedWorker<D, R> extends RefusalAwareWorker<D, R> {
  /** Last sign of life of the fetch loop (ms since epoch). */
  lastProgressAt = Date.now();
  /** Jobs this worker's processor is running now. */
  inFlight = 0;
  /** When the fetch under way started (0: none under way). */
  fetchSince = 0;
  /** Whether its loop has shown any sign of life yet. */
  progressed = false;

  constructor(name: string, processor: Processor<D, R>, options: WorkerOptions) {
    super(
      name,
      async (job, token, signal) => {
        this.inFlight += 1;
        this.lastProgressAt = Date.now();
        this.progressed = true;
        try {
          return await processor(job, token, signal);
        } finally {
          this.inFlight -= 1;
          this.lastProgressAt = Date.now();
        }
      },
      options,
    );
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<D, R>> {
    this.fetchSince = Date.now();
    try {
      const job = await super.moveToActive(token, name);
      this.lastProgressAt = Date.now();
      this.progressed = true;
      return job;
    } finally {
      this.fetchSince = 0;
    }
  }

  /**
   * Milliseconds without a sign of life while it had a free slot, or 0 when
   * it is working, idle-but-polling, paused, closing, or backing off from a
   * Redis that refuses commands (its fetches are refused, not stuck).
   */
  stuckForMs(now: number): number {
    if (!this.isRunning() || this.isPaused() || this.closing || this.backingOff()) return 0;
    if (this.inFlight >= this.concurrency) return 0;
    return Math.max(0, now - this.lastProgressAt);
  }
}
