import type { RedisClient } from './connection';
import type { KeyBuilder } from './keys';
import { decimal } from './script-options';
import { runScript } from './scripts';

/**
 * A tag's advance per job at weight 1: divisible by every weight from 1 to 16,
 * so those weights advance by whole numbers and tie exactly where they should
 * (weights 3 and 1: three jobs of the first end where one of the second does).
 */
export const FAIR_SCALE = 720_720;

/** A deliver queue's BullMQ lists the fair queue reads: empty, with nothing in transit, nothing moved is waiting. */
export interface FairQueueLists {
  wait: string;
  active: string;
}

/** Jobs of one tenant to add to a partition's fair queue, first in, first out. */
export interface FairAdd {
  tenant: string;
  /** The tenant's weight, an integer of 1 or more; it replaces the one kept. */
  weight: number;
  documents: readonly string[];
  /** Of the tenant's bulk class: moved only when the tenant has no other job waiting. */
  bulk?: boolean;
  /**
   * The tenant's in-flight cap (none when absent); it replaces the one kept.
   * A capped tenant's documents begin with their 64-character operation key.
   */
  cap?: number;
}

/** Operation keys of one tenant. */
export interface TenantOperations {
  tenant: string;
  keys: string[];
}

/** What workers say of capped tenants' moved operations, with the next move. */
export interface FairReport {
  started: readonly TenantOperations[];
  /** Their attempt ended for good (not one that runs again): their places are free. */
  ended: readonly TenantOperations[];
}

/** How long a capped tenant's operation holds its place when nobody says it ended (its worker died, its job is gone). */
export interface FairDeadlines {
  /** From a start: past the lease and the stalled-job recovery that runs it again. */
  startedMs: number;
  /** From its move, while no worker has started it. */
  movedMs: number;
}

const NO_REPORT: FairReport = { started: [], ended: [] };

/**
 * A deliver partition's fair queue between tenants (lua/fair-move.lua;
 * docs/tenants.md, "Fair share"). Documents are opaque here: the deliver jobs,
 * as the caller encoded them. Every method is one round trip.
 */
export class FairQueue {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeyBuilder,
    private readonly now: () => number = Date.now,
    private readonly deadlines: FairDeadlines = { startedMs: 60_000, movedMs: 600_000 },
  ) {}

  /**
   * Adds `adds`, then moves the next jobs in fair order into transit, as many
   * as `window` less the moved operations no worker has started yet (`taken`:
   * what workers started since they last said). `queue` names the deliver
   * queue's wait and active lists, in the partition's slot. Returns the moved
   * documents, in order: the caller adds them to the queue, then calls `done`.
   */
  async move(partition: number, queue: FairQueueLists, adds: readonly FairAdd[], window: number, taken = 0, report: FairReport = NO_REPORT): Promise<string[]> {
    const k = this.keys.fairQueue(partition);
    const now = this.now();
    const reply = await runScript(
      this.redis,
      'fair-move',
      [k.ready, k.clock, k.transit, queue.wait, queue.active],
      {
        listPrefix: k.listPrefix,
        adds: adds.map((a) => ({ tenant: a.tenant, weight: Math.max(1, Math.floor(a.weight)), count: a.documents.length, bulk: a.bulk === true, cap: a.cap ?? 0 })),
        inPrefix: k.inPrefix,
        started: [...report.started],
        ended: [...report.ended],
        startedUntil: decimal(now + this.deadlines.startedMs),
        movedUntil: decimal(now + this.deadlines.movedMs),
        window,
        taken: decimal(taken),
        scale: decimal(FAIR_SCALE),
        now: decimal(now),
      },
      adds.flatMap((a) => a.documents),
    );
    return reply as string[];
  }

  /** The moved documents are in the deliver queue: out of transit. */
  async done(partition: number, documents: readonly string[]): Promise<void> {
    if (documents.length === 0) return;
    await this.redis.zrem(this.keys.fairQueue(partition).transit, ...documents);
  }

  /**
   * Documents moved at least `olderThanMs` ago and still in transit: their
   * mover died before adding them. Adding them again is safe (a deliver job's
   * id is its operation key, and a claim sends an operation once).
   */
  async stale(partition: number, olderThanMs: number, max = 100): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.fairQueue(partition).transit, '-inf', this.now() - olderThanMs, 'LIMIT', 0, max);
  }

  /** Jobs waiting per tenant, summed over `partitions`. */
  async waitingIn(partitions: readonly number[]): Promise<Map<string, number>> {
    const sums = new Map<string, number>();
    for (const each of await Promise.all(partitions.map((p) => this.waiting(p)))) {
      for (const [tenant, n] of each) sums.set(tenant, (sums.get(tenant) ?? 0) + n);
    }
    return sums;
  }

  /** Jobs of `tenant` waiting in partition `partition`'s fair queue, both classes. */
  async waitingOf(partition: number, tenant: string): Promise<number> {
    const list = this.keys.fairQueue(partition).listPrefix + tenant;
    const [[, plain] = [], [, bulk] = []] = (await this.redis.pipeline().llen(list).llen(`${list}|bulk`).exec()) ?? [];
    return Number(plain ?? 0) + Number(bulk ?? 0);
  }

  /** Operations of `tenant` counted against its cap in partition `partition` now (those past their deadline are not). */
  async inFlight(partition: number, tenant: string): Promise<number> {
    return this.redis.zcount(this.keys.fairQueue(partition).inPrefix + tenant, this.now(), '+inf');
  }

  /** Keys in partition `partition`'s slot that never hold anything: the lists of a queue that takes no jobs. */
  noQueue(partition: number): FairQueueLists {
    const empty = this.keys.fairQueue(partition).listPrefix;
    return { wait: empty, active: empty };
  }

  /** Jobs waiting per tenant with any waiting (not those in transit or in the queue). */
  async waiting(partition: number): Promise<Map<string, number>> {
    const k = this.keys.fairQueue(partition);
    const tenants = await this.redis.zrange(k.ready, 0, -1);
    if (tenants.length === 0) return new Map();
    const pipeline = this.redis.pipeline();
    for (const t of tenants) pipeline.llen(k.listPrefix + t).llen(`${k.listPrefix + t}|bulk`);
    const lengths = (await pipeline.exec()) ?? [];
    return new Map(tenants.map((t, i) => [t, Number(lengths[2 * i]?.[1] ?? 0) + Number(lengths[2 * i + 1]?.[1] ?? 0)]));
  }
}
