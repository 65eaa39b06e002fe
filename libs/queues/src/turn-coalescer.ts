/** One caller's items, waiting for the shared enqueue. */
interface Waiting<T> {
  items: readonly T[];
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Gathers what the callers of one event-loop turn want enqueued into one
 * enqueue, so that it can travel in shared `batch` jobs: the fan-outs of the
 * decide jobs that ran at once (apps/decision), the first arrivals of the
 * messages ingest accepted at once (apps/ingest).
 *
 * Why: every BullMQ job costs the same fixed work however little it carries
 * (an add, a fetch, a completion, its event-stream entries: most of Redis's
 * time and about half of a worker's CPU per job). Under load many callers
 * come in one turn; alone, a caller's items go out as they did before.
 *
 * When: items wait at most until the end of the current turn of the event
 * loop (`setImmediate`), or not at all once `flushAt` items are waiting; no
 * timer ever delays them. Every caller's promise settles only once the
 * enqueue that carries its items did (ack after effect, docs/protocol.md
 * invariant 2); if that enqueue fails, every caller of it fails, and each
 * retries as it would have alone (the next enqueue starts afresh). Retried
 * items may land in a batch with other companions (another job id): the
 * stages are idempotent per message and per operation (the decision record,
 * the claim), so such an overlap costs a lookup, never a second send.
 */
export class TurnCoalescer<T> {
  private waiting: Array<Waiting<T>> = [];
  private count = 0;
  private scheduled = false;

  /**
   * @param enqueue adds the items (as batch jobs, idempotent by job id); resolves once they are in Redis
   * @param flushAt enqueue at once when this many items are waiting (a full batch)
   */
  constructor(
    private readonly enqueue: (items: T[]) => Promise<void>,
    private readonly flushAt: number,
  ) {}

  /** Resolves once `items` are in Redis, in a shared enqueue (see the class). */
  add(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ items, resolve, reject });
      this.count += items.length;
      if (this.count >= this.flushAt) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.onTurnEnd);
      }
    });
  }

  private readonly onTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    const group = this.waiting;
    if (group.length === 0) return;
    this.waiting = [];
    this.count = 0;
    const items = group.length === 1 ? [...(group[0] as Waiting<T>).items] : group.flatMap((w) => w.items);
    let enqueued: Promise<void>;
    try {
      enqueued = this.enqueue(items);
    } catch (err) {
      // A synchronous throw (a bug, a serialization error) fails its callers like a rejection.
      enqueued = Promise.reject(err);
    }
    enqueued.then(
      () => {
        for (const w of group) w.resolve();
      },
      (err: unknown) => {
        for (const w of group) w.reject(err);
      },
    );
  }
}
