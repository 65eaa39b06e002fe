/**
 * Deadlines of one length (ingest's `enqueueTimeoutMs`) on one shared coarse
 * timer, in place of a `setTimeout` and a `Promise.race` per request: the
 * timer runs only while something waits, every `ms / 10` (at most 100 ms),
 * and expires whatever is past its deadline. A deadline thus fires between
 * `ms` and `ms` plus one tick after it started; nothing ever fires early.
 * Pending entries are bounded by the requests in flight, so a tick's scan is short.
 */
export class Deadlines {
  private readonly pending = new Map<() => void, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly tickMs: number;

  constructor(
    /** How long each deadline is. */
    readonly ms: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tickMs = Math.max(1, Math.min(100, Math.ceil(ms / 10)));
  }

  /** Calls `expire` once `ms` have passed, unless `cancel(expire)` comes first. */
  start(expire: () => void): void {
    this.pending.set(expire, this.now() + this.ms);
    this.timer ??= setTimeout(this.tick, this.tickMs).unref();
  }

  /** Forgets `expire` (its work finished in time); a no-op once it fired. */
  cancel(expire: () => void): void {
    this.pending.delete(expire);
  }

  /** Deadlines not yet expired or cancelled. */
  get size(): number {
    return this.pending.size;
  }

  private readonly tick = (): void => {
    this.timer = undefined;
    const t = this.now();
    // Insertion order is deadline order (one length, a monotonic clock): stop at the first one not due.
    for (const [expire, at] of this.pending) {
      if (at > t) break;
      this.pending.delete(expire);
      expire();
    }
    if (this.pending.size > 0) this.timer = setTimeout(this.tick, this.tickMs).unref();
  };
}
