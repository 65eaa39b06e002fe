import { DEFAULT_TENANT, partitionOf, type DeliverJobData } from '@singleshot/core';
import type { FairAdd, FairQueue } from '@singleshot/store';
import { enqueueDeliveryJobs } from './batch-jobs';
import { FairReports, type PendingReport } from './fair-reports';
import type { Queues } from './queues';

/** What the fair queue between tenants needs (docs/tenants.md, "Fair share"). */
export interface FairShare {
  queue: FairQueue;
  /** Operations moved to a partition's queue and not yet taken by a worker, at most (`tenancy.window`). */
  window: number;
  weightOf(tenant: string): number;
  /** A tenant's in-flight cap (`tenancy.tenants[].maxInFlight`), undefined for none. */
  capOf(tenant: string): number | undefined;
  /** Operations per batch deliver job (`delivery.batchMax`). */
  batchMax: number;
  /** The fair queue of the partition layout being left (`redis.formerPartitions`), drained into today's queues. */
  former?: { queue: FairQueue; partitions: number };
}

/**
 * Deliver jobs by way of each partition's fair queue between tenants. The
 * decision offers a fan-out's jobs: they join their tenants' lists, and as
 * many as the queue has room for go into it at once, so a deployment below
 * its capacity waits for nothing. The rest wait until a deliver worker takes
 * a job and pumps the partition, or the periodic pump runs.
 *
 * Moved jobs are added to the queue, then taken out of transit. A process
 * that dies between the two leaves them in transit, and `recover` adds them
 * again: the job id is the operation key and a claim sends an operation once,
 * so a second add costs nothing (invariant 1, docs/protocol.md).
 */
export class FairDispatch {
  private readonly running = new Map<number, Promise<void>>();
  private readonly again = new Set<number>();
  /** What workers of this process said of moved operations, not yet told to the fair queues. */
  private readonly reports = new FairReports();

  constructor(
    private readonly queues: Pick<Queues, 'deliverAll' | 'deliverOf' | 'partitions'>,
    private readonly share: FairShare,
  ) {}

  /**
   * Offers a fan-out's deliver jobs. A job with documents goes to the queue at
   * once: the render wakes it by its job id, which must be there to be found.
   */
  async offer(jobs: readonly DeliverJobData[]): Promise<void> {
    const direct: DeliverJobData[] = [];
    const byPartition = new Map<number, Map<string, string[]>>();
    for (const job of jobs) {
      if (job.documents && job.documents.length > 0) {
        direct.push(job);
        continue;
      }
      const p = partitionOf(job.operationKey, this.queues.partitions);
      let tenants = byPartition.get(p);
      if (!tenants) byPartition.set(p, (tenants = new Map()));
      // A tenant's transactional and bulk jobs are two adds: `tenant` or `tenant|bulk` (no tenant id holds a `|`).
      const group = job.priority === 'bulk' ? `${job.tenant ?? DEFAULT_TENANT}|bulk` : (job.tenant ?? DEFAULT_TENANT);
      const list = tenants.get(group);
      // The operation key first: a capped tenant's in-flight set takes it from there (fair-move.lua).
      const entry = `${job.operationKey} ${JSON.stringify(job)}`;
      if (list) list.push(entry);
      else tenants.set(group, [entry]);
    }
    await Promise.all([
      enqueueDeliveryJobs(this.queues, direct, this.share.batchMax),
      ...[...byPartition].map(([p, groups]) => this.move(p, [...groups].map(([group, documents]) => this.addOf(group, documents)))),
    ]);
  }

  /**
   * A worker starts a moved operation (`moved`): its place in the window is
   * free, and a capped tenant's deadline runs from now. Pumps its partition.
   */
  started(op: Pick<DeliverJobData, 'operationKey' | 'tenant'>): Promise<void> {
    const p = partitionOf(op.operationKey, this.queues.partitions);
    const tenant = op.tenant ?? DEFAULT_TENANT;
    this.reports.started(p, tenant, op.operationKey, this.share.capOf(tenant) !== undefined);
    return this.pump(p);
  }

  /**
   * A moved operation's attempt ended for good (not one that runs again): a
   * capped tenant's place is free. Nothing to say for an uncapped tenant.
   */
  ended(op: Pick<DeliverJobData, 'operationKey' | 'tenant'>): Promise<void> {
    const tenant = op.tenant ?? DEFAULT_TENANT;
    if (this.share.capOf(tenant) === undefined) return Promise.resolve();
    const p = partitionOf(op.operationKey, this.queues.partitions);
    this.reports.ended(p, tenant, op.operationKey);
    return this.pump(p);
  }

  /**
   * Fills partition `p`'s queue up to the window, telling the fair queue
   * what workers said since the last move. A call while one runs makes that
   * one run once more rather than racing it: a worker starting many
   * operations in a row costs one script call per round, not one each.
   */
  pump(p: number): Promise<void> {
    const current = this.running.get(p);
    if (current) {
      this.again.add(p);
      return current;
    }
    const run = (async () => {
      try {
        do {
          this.again.delete(p);
          const report = this.reports.take(p);
          try {
            await this.move(p, [], report);
          } catch (err) {
            // Not told: the next pump tells it.
            this.reports.restore(p, report);
            throw err;
          }
        } while (this.again.has(p));
      } finally {
        this.running.delete(p);
      }
    })();
    this.running.set(p, run);
    return run;
  }

  /**
   * Adds again what a mover that died left in transit at least `olderThanMs`
   * ago, and, while `redis.formerPartitions` is set, moves partition `p`'s
   * fair queue of that layout into the queues of `redis.partitions`, which
   * are the only ones producers write to. Returns how many jobs it handed on.
   */
  async recover(p: number, olderThanMs: number): Promise<number> {
    const stale = await this.share.queue.stale(p, olderThanMs);
    await this.hand(this.share.queue, p, stale);
    const former = this.share.former;
    if (!former || p >= former.partitions) return stale.length;
    const formerStale = await former.queue.stale(p, olderThanMs);
    await this.hand(former.queue, p, formerStale);
    // Nothing pumps that layout's fair queue: measured against lists that stay empty, all of it has room.
    const moved = await former.queue.move(p, former.queue.noQueue(p), [], this.share.window);
    await this.hand(former.queue, p, moved);
    return stale.length + formerStale.length + moved.length;
  }

  private addOf(group: string, documents: string[]): FairAdd {
    const [tenant = group, bulk] = group.split('|');
    const cap = this.share.capOf(tenant);
    return { tenant, weight: this.share.weightOf(tenant), documents, ...(bulk ? { bulk: true } : {}), ...(cap !== undefined ? { cap } : {}) };
  }

  /** Jobs waiting in the fair queues of `partitions`, per tenant. */
  waiting(partitions: readonly number[]): Promise<Map<string, number>> {
    return this.share.queue.waitingIn(partitions);
  }

  private async move(p: number, adds: FairAdd[], report?: PendingReport): Promise<void> {
    const queue = this.queues.deliverAll[p];
    if (!queue) throw new RangeError(`partition ${p} has no deliver queue`);
    // BullMQ's wait and active lists: when they and transit are empty, nothing moved is waiting.
    const lists = { wait: queue.keys.wait ?? `${queue.qualifiedName}:wait`, active: queue.keys.active ?? `${queue.qualifiedName}:active` };
    const moved = await this.share.queue.move(p, lists, adds, this.share.window, report?.taken ?? 0, report);
    await this.hand(this.share.queue, p, moved);
  }

  private async hand(fair: FairQueue, p: number, documents: readonly string[]): Promise<void> {
    if (documents.length === 0) return;
    // Marked, so the worker that starts it frees its place in the window (`pump`).
    await enqueueDeliveryJobs(this.queues, documents.map((d): DeliverJobData => ({ ...(JSON.parse(d.slice(d.indexOf(' ') + 1)) as DeliverJobData), moved: true })), this.share.batchMax);
    await fair.done(p, documents);
  }
}
