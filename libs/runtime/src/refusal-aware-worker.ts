import { DelayedError, Worker, type Job } from 'bullmq';
import { UpgradeRequiredError, layoutRefusal, redisRefusals, type RefusalBackoff } from '@singleshot/store';
import { jobEnded, jobStarted } from './in-flight-jobs';

/** When a job a script refused on a newer layout is offered again (to a newer process). */
const LAYOUT_RETRY_MS = 1_000;

/** Resolves when `signal` aborts (the worker closes). */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * A BullMQ worker that backs off while Redis refuses commands, and counts the
 * jobs it runs (for a shutdown that gives up to say what it abandons).
 *
 * BullMQ's run loop waits `runRetryDelay` after a connection error, but an
 * error reply (`OOM`, `MISCONF`, `READONLY`…) to its fetch is "not a
 * connection error": it emits it and fetches again at once, so a refusing
 * Redis met a worker's fetch in a tight loop (and its blocking wait for a job,
 * refused on a replica, every 100 ms). Here a refused fetch or wait first
 * waits out the process's `RefusalBackoff` (cut short by `close()`), then
 * fails as before, and no fetch starts while the process is backing off
 * (another loop met the refusal). A job whose processing met a refusal joins
 * the backoff; one that went through ends it. A fetch that goes through does
 * not: under OOM a fetch may write nothing Redis refuses, then the job's own
 * writes are refused. With Redis healthy all this is a comparison or two per
 * job and nothing more.
 *
 * A job whose script found a Redis layout newer than this code
 * (`UpgradeRequiredError`) is put back delayed, untouched and without an
 * attempt counted, and the worker fetches no more jobs (`layoutRefusal`).
 */
export class RefusalAwareWorker<D, R> extends Worker<D, R> {
  private refusals: RefusalBackoff = redisRefusals;
  private readonly stopWaiting = new AbortController();

  /** The backoff this worker waits out (the process's by default). */
  useRefusals(refusals: RefusalBackoff): this {
    this.refusals = refusals;
    return this;
  }

  /** True while Redis refuses this process's commands and it backs off (`/readyz` says so). */
  backingOff(): boolean {
    return this.refusals.refusing() !== undefined;
  }

  protected override createBackend(): void {
    super.createBackend();
    // Called from BullMQ's constructor, before this class's fields exist: the
    // wrapper reads them when it runs, by which time they do.
    const backend = this.backend;
    const waitForJob = backend.waitForJob.bind(backend);
    backend.waitForJob = async (blockTimeout: number) => {
      try {
        return await waitForJob(blockTimeout);
      } catch (err) {
        if (this.refusals.noteError(err)) await this.refusals.wait(this.stopWaiting.signal);
        throw err;
      }
    };
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job<D, R>> {
    // A process older than the Redis layout takes no more work: newer ones take it.
    if (layoutRefusal.refused() !== undefined) await untilAborted(this.stopWaiting.signal);
    if (this.refusals.inBackoff()) await this.refusals.wait(this.stopWaiting.signal);
    try {
      return await super.moveToActive(token, name);
    } catch (err) {
      if (this.refusals.noteError(err)) await this.refusals.wait(this.stopWaiting.signal);
      throw err;
    }
  }

  override async processJob(job: Job<D, R>, token: string, fetchNextCallback?: () => boolean): Promise<void | Job<D, R>> {
    jobStarted(this.name);
    try {
      // A finished job may hand its worker the next one directly; not once the layout is newer than this code.
      return await super.processJob(job, token, () => layoutRefusal.refused() === undefined && (fetchNextCallback?.() ?? true));
    } finally {
      jobEnded(this.name);
    }
  }

  protected override async callProcessJob(job: Job<D, R>, token: string, signal?: AbortSignal): Promise<R> {
    try {
      const result = await super.callProcessJob(job, token, signal);
      this.refusals.succeeded();
      return result;
    } catch (err) {
      if (err instanceof UpgradeRequiredError) {
        // The script did nothing: the job goes back as it was, not as a failed attempt, for a newer process.
        layoutRefusal.note(err.held);
        await job.moveToDelayed(Date.now() + LAYOUT_RETRY_MS, token);
        throw new DelayedError();
      }
      this.refusals.noteError(err);
      throw err;
    }
  }

  override close(force?: boolean): Promise<void> {
    this.stopWaiting.abort();
    return super.close(force);
  }
}
