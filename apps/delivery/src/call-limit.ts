/**
 * A process-wide bound on operations in flight (claim, provider call, commit):
 * `delivery.concurrency`. BullMQ's worker concurrency counts jobs, and a batch
 * job carries several operations, so the bound is kept here, around each
 * operation, for single jobs and batches alike: a user's provider sees at most
 * `concurrency` calls at once from one process, as before batching. A waiting
 * operation has not claimed yet, so no lease runs out while it waits.
 */
export class CallLimit {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`CallLimit needs a positive integer, got ${max}`);
  }

  /** Runs `fn` once fewer than `max` others run; first come, first served. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same), or free it.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Operations running now (for tests and diagnostics). */
  get running(): number {
    return this.active;
  }
}
