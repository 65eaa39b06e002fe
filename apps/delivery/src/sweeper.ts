import type { Queues } from '@singleshot/queues';
import type { RedisClient } from '@singleshot/store';
import { TERMINAL_STATUSES, type DeliverJobData } from '@singleshot/core';
import { ActiveIndex, OperationReader, RedisMutex, redisRefusals, type KeyBuilder, type RefusalBackoff } from '@singleshot/store';
import { deliverJobSchema, requeueDelivery } from '@singleshot/queues';
import type { Logger } from '@singleshot/observability';

export interface SweeperDeps {
  redis: RedisClient;
  keys: KeyBuilder;
  deliverQueues: Pick<Queues, 'deliverOf'>;
  /** Owner id of the sweeper mutex (the process's worker id). */
  workerId: string;
  /** Time between sweeps; an operation is looked at once it is this far past due. */
  intervalMs: number;
  leaseMs: number;
  logger: Logger;
  /** Operations looked at per shard and sweep (bounds one sweep's work). */
  batch?: number;
  now?: () => number;
  /** The backoff against a Redis that refuses commands (the process's by default). */
  refusals?: RefusalBackoff;
}

export interface SweepReport {
  /** This process held the sweeper mutex and swept. */
  swept: boolean;
  checked: number;
  /** Operations whose deliver job was missing or finished, re-enqueued. */
  requeued: string[];
  /** Index entries of operations that are terminal or gone. */
  cleaned: number;
  /** Overdue, but locked or with a job still queued: left alone. */
  alive: number;
}

/** How long an operation without a stored job is left before it is looked at again. */
const NO_JOB_RECHECK_MS = 3_600_000;

/**
 * The recovery sweeper (docs/protocol.md, invariant 7, "nothing vanishes"): finds
 * operations left `pending`, `sending`, `failed` or `in_doubt` whose next step
 * is overdue, and whose deliver job no longer exists (lost in a Redis crash,
 * removed by hand, or failed for good inside BullMQ), and puts the job back
 * from the copy kept at the first claim. The claim and reconcile path then
 * drives the operation to a terminal state; the sweeper never decides one.
 *
 * One sweeper is active at a time across every delivery process (a SET NX PX
 * mutex, renewed each sweep, free again 3 intervals after its holder died).
 * It reads the per-shard index the claim/commit scripts keep, so a sweep costs
 * a few commands per overdue operation, not a scan of the keyspace.
 *
 * Jobs are looked up by operation key, so an operation carried by a `batch`
 * job (libs/queues batch-runner.ts) looks jobless here. Once its lock has expired (its
 * batch's worker died, say) the sweeper re-adds a single job while BullMQ
 * may also hand the stalled batch to another worker. Chosen, not
 * overlooked: the claim lets one of them through at a time and a sent
 * operation answers `duplicate`, so the overlap costs a claim, never a send.
 */
export class RecoverySweeper {
  readonly index: ActiveIndex;
  private readonly operations: OperationReader;
  private readonly mutex: RedisMutex;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(private readonly deps: SweeperDeps) {
    this.index = new ActiveIndex(deps.redis, deps.keys);
    this.operations = new OperationReader(deps.redis, deps.keys);
    this.mutex = new RedisMutex(deps.redis, deps.keys.sweeperLock(), deps.workerId);
    this.now = deps.now ?? Date.now;
  }

  /** Sweeps every `intervalMs` until `stop()`; the first sweep after a random part of the interval. */
  start(): void {
    if (this.deps.intervalMs <= 0) return;
    this.schedule(Math.floor(Math.random() * this.deps.intervalMs));
  }

  /**
   * Stops sweeping and frees the mutex for another process. Bounded: with Redis
   * away a sweep's commands wait for the reconnect, and shutdown must not.
   */
  async stop(waitMs = 2_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const bounded = (p: Promise<unknown>) =>
      Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, waitMs)))]).finally(() => clearTimeout(timer));
    if (this.running) await bounded(this.running);
    await bounded(this.mutex.release());
  }

  /** One sweep (when this process holds, or can take, the sweeper mutex). */
  async sweepOnce(): Promise<SweepReport> {
    const report: SweepReport = { swept: false, checked: 0, requeued: [], cleaned: 0, alive: 0 };
    const { intervalMs, leaseMs } = this.deps;
    if (!(await this.mutex.acquire(Math.max(1_000, intervalMs * 3)))) return report;
    report.swept = true;
    const now = this.now();
    for (let shard = 0; shard < this.deps.keys.shards && !this.stopped; shard++) {
      const due = await this.index.overdue(shard, now - intervalMs, this.deps.batch ?? 200);
      if (due.length === 0) continue;
      const probes = await this.operations.probe(due.map((d) => d.operationKey));
      for (const { operationKey, status, job: storedJob, lockTtlMs: pttl } of probes) {
        report.checked++;
        if (!status || TERMINAL_STATUSES.includes(status)) {
          // Past retention, or a terminal commit raced with an index update: only the entry is left.
          await this.index.remove(operationKey);
          report.cleaned++;
          continue;
        }
        if (pttl > 0) {
          await this.index.touch(operationKey, now + pttl + intervalMs);
          report.alive++;
          continue;
        }
        const job = parseJob(storedJob);
        if (!job) {
          this.deps.logger.warn({ event: 'sweeper_job_missing', operationKey, status }, 'sweeper: overdue operation has no stored deliver job; cannot re-enqueue it');
          await this.index.touch(operationKey, now + NO_JOB_RECHECK_MS);
          continue;
        }
        const result = await requeueDelivery(this.deps.deliverQueues, job);
        await this.index.touch(operationKey, now + leaseMs + intervalMs);
        if (result === 'added') {
          report.requeued.push(operationKey);
          this.deps.logger.warn({ event: 'sweeper_requeued', operationKey, status }, 'sweeper: deliver job was missing; re-enqueued');
        } else {
          report.alive++;
        }
      }
    }
    return report;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const refusals = this.deps.refusals ?? redisRefusals;
    this.timer = setTimeout(() => {
      this.running = this.sweepOnce()
        .then(() => refusals.succeeded())
        .catch((err: unknown) => {
          const refused = refusals.noteError(err);
          this.deps.logger.warn({ event: refused ? 'redis_refusing' : 'sweep_failed', err, ...(refused ? { code: refused } : {}) }, 'sweeper: sweep failed; trying again next interval');
        })
        // While Redis refuses commands the next sweep also waits out the backoff.
        .finally(() => this.schedule(Math.max(this.deps.intervalMs, refusals.remainingMs())));
    }, delayMs);
    this.timer.unref();
  }
}

function parseJob(stored: unknown): DeliverJobData | undefined {
  if (stored === undefined) return undefined;
  const parsed = deliverJobSchema.safeParse(stored);
  return parsed.success ? parsed.data : undefined;
}
