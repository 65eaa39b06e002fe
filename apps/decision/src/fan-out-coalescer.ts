import type { DeliverJobData } from '@singleshot/core';

/** One decide job's fan-out, waiting for the shared add. */
interface Waiting {
  jobs: DeliverJobData[];
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Gathers the fan-outs of the decide jobs that run at once in this process
 * into one enqueue, so that their operations share `batch` deliver jobs
 * (one per deliver partition, up to `delivery.batchMax` operations each)
 * instead of one batch per message.
 *
 * Why: every BullMQ job costs the same fixed work however little it carries
 * (an add, a fetch, a completion, its event-stream entries: about half of the
 * delivery process's CPU per job and most of Redis's time). An event with two
 * recipients made one batch of two; under load the decide jobs that finish in
 * one event-loop turn make one batch of many.
 *
 * When: a fan-out waits at most until the end of the current turn of the
 * event loop (`setImmediate`), or not at all once `flushAt` operations are
 * waiting; a decide job alone is not delayed by a timer. Every caller's
 * promise settles only once the add that carries its operations did (ack
 * after effect, docs/protocol.md invariant 2); if that add fails, every
 * caller of it fails and its decide job is retried by BullMQ. A retried
 * decide job may land its operations in a batch of other companions (another
 * job id): the claim lets only one attempt of an operation through at a time
 * and a sent operation answers `duplicate`, so the overlap costs a claim,
 * never a second send.
 */
export class FanOutCoalescer {
  private waiting: Waiting[] = [];
  private operations = 0;
  private scheduled = false;

  /**
   * @param enqueue adds a set of deliver jobs (batched, idempotent by job id) and waits for replicas
   * @param flushAt enqueue at once when this many operations are waiting (a full batch)
   */
  constructor(
    private readonly enqueue: (jobs: DeliverJobData[]) => Promise<void>,
    private readonly flushAt: number,
  ) {}

  /** Resolves once `jobs` are in Redis, in a shared add (see the class). */
  add(jobs: DeliverJobData[]): Promise<void> {
    if (jobs.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ jobs, resolve, reject });
      this.operations += jobs.length;
      if (this.operations >= this.flushAt) this.flush();
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
    this.operations = 0;
    const jobs = group.length === 1 ? (group[0] as Waiting).jobs : group.flatMap((w) => w.jobs);
    this.enqueue(jobs).then(
      () => {
        for (const w of group) w.resolve();
      },
      (err: unknown) => {
        for (const w of group) w.reject(err);
      },
    );
  }
}
