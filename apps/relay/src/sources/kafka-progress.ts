/**
 * How far a fetched batch of one partition may be committed: the records are
 * accepted in any order (several at once), but a committed offset means
 * "everything before it is done", so it moves only over an unbroken run of
 * accepted records from the batch's start. The lowest record not accepted
 * yet bounds it.
 */
export class AcceptedPrefix {
  private readonly done: boolean[];
  private next = 0;

  constructor(size: number) {
    this.done = new Array<boolean>(size).fill(false);
  }

  /** Marks record `index` (its position in the batch) accepted, dead or a duplicate: done either way. */
  accept(index: number): void {
    this.done[index] = true;
    while (this.next < this.done.length && this.done[this.next]) this.next++;
  }

  /** How many records from the start are done (0 to the batch's size). */
  get length(): number {
    return this.next;
  }

  /** True once every record is done. */
  get complete(): boolean {
    return this.next === this.done.length;
  }
}

/**
 * The offset to commit once the first `count` records of a batch are done: the
 * one after the last of them, or after the batch's last offset when all are
 * done (a batch may end in control records or compacted gaps that are never
 * delivered but must be passed over). Undefined for `count` 0: nothing to
 * commit.
 */
export function commitOffsetAfter(offsets: readonly string[], count: number, batchLastOffset: string): string | undefined {
  if (count === 0) return undefined;
  const last = count === offsets.length ? batchLastOffset : (offsets[count - 1] as string);
  return (BigInt(last) + 1n).toString();
}

/**
 * At most `size` records in acceptance at once across a source's partitions.
 * `acquire` waits for a free slot, or resolves false when `signal` aborts
 * first (the relay is stopping).
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        signal.removeEventListener('abort', abort);
        resolve(true);
      };
      const abort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', abort, { once: true });
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
