import type { Processor, WorkerOptions } from 'bullmq';
import { partitionQueueName } from '@singleshot/queues';
import type { KeyBuilder } from '@singleshot/store';
import type { Logger, Metrics } from '@singleshot/observability';
import type { Runtime } from './runtime';
import { WatchedWorker } from './watched-worker';

/** A queue partition a worker consumes: its BullMQ name and prefix. */
export interface ConsumedPartition {
  name: string;
  prefix: string;
}

/**
 * The partitions of `base` (a queue name) this process consumes: `only` (e.g.
 * `delivery.partitions`) or all of the current layout, plus every partition
 * counted by `redis.formerPartitions` while it is set: jobs still waiting under
 * a partition count that producers do not write to must drain. Throws a
 * RangeError for a partition that does not exist.
 */
export function consumedPartitions(keys: KeyBuilder, base: string, only?: readonly number[], formerPartitions?: number): ConsumedPartition[] {
  const P = keys.partitions;
  for (const p of only ?? []) if (p >= P) throw new RangeError(`partition ${p} does not exist (redis.partitions is ${P})`);
  const current = (only ?? Array.from({ length: P }, (_, p) => p)).map((p) => ({ name: partitionQueueName(base, p, P), prefix: keys.queuePrefixOf(p) }));
  if (formerPartitions === undefined || formerPartitions === P) return current;
  const former = keys.withPartitions(formerPartitions);
  const seen = new Set(current.map((c) => `${c.prefix}:${c.name}`));
  const old = Array.from({ length: formerPartitions }, (_, p) => ({ name: partitionQueueName(base, p, formerPartitions), prefix: former.queuePrefixOf(p) }));
  return [...current, ...old.filter((o) => !seen.has(`${o.prefix}:${o.name}`))];
}

/** Options of `PartitionWorkers`: BullMQ's worker options but the connection and prefix. */
export type PartitionWorkerOptions = Omit<WorkerOptions, 'connection' | 'prefix'> & {
  /** Name of the workers' own connection (`CLIENT LIST`); unused with `shareClientConnection`. */
  connectionName: string;
  /**
   * Run the workers' commands (fetch, lock renewal, completion) on the
   * runtime's client connection instead of a connection of their own. A
   * processor that writes on the client connection then shares each
   * event-loop turn's socket write with the workers' commands (the connection
   * batches a turn's writes): fewer syscalls per job. Blocking waits stay on
   * BullMQ's own blocking connection either way.
   */
  shareClientConnection?: boolean;
  /**
   * A partition's worker with a free slot and no sign of life for this long
   * has no working consumer: it shows in readiness and the metric, and is
   * replaced by a new worker. Well above an idle worker's longest wait (a 10 s
   * block plus BullMQ's 1 s watchdog). Default 20 s.
   */
  stuckAfterMs?: number;
};

type Listener = { event: 'error' | 'failed'; listener: (...args: never[]) => void };

/**
 * One BullMQ worker per consumed partition, sharing one connection (BullMQ
 * opens its own blocking connection per worker). `concurrency` is the process's
 * total, split evenly over the partitions (at least 1 each).
 *
 * A watchdog looks at every partition's fetch loop. After a master failover on
 * a Redis Cluster a worker's loop can wait forever on a command the failed node
 * never answered, while its queue fills: the partition then has no consumer
 * and nothing else would say so. The watchdog reports such a partition
 * (`singleshot_partition_consumers` 0, `/readyz` failing) and replaces its
 * worker; the abandoned one is closed without waiting for it.
 */
export class PartitionWorkers<D, R> {
  readonly workers: WatchedWorker<D, R>[];
  private readonly listeners: Listener[] = [];
  private readonly watchdog: NodeJS.Timeout;
  private readonly stuckAfterMs: number;
  private readonly create: (p: ConsumedPartition) => WatchedWorker<D, R>;
  private closed = false;
  private watching = false;
  /** Partitions whose worker was replaced and has not fetched yet. */
  private readonly replaced = new Set<number>();
  /** Whether a partition's queue answers a read within a few seconds. */
  private readonly probe: (p: ConsumedPartition) => Promise<boolean>;

  constructor(
    rt: Pick<Runtime, 'connect' | 'redis'> & { metrics?: Pick<Metrics, 'partitionConsumers' | 'partitionConsumerRestarts'>; logger?: Logger },
    private readonly partitions: readonly ConsumedPartition[],
    processor: Processor<D, R>,
    options: PartitionWorkerOptions,
  ) {
    const { connectionName, shareClientConnection = false, concurrency = 1, stuckAfterMs = 20_000, ...rest } = options;
    const connection = shareClientConnection ? rt.redis : rt.connect('worker', connectionName);
    const each = Math.max(1, Math.ceil(concurrency / Math.max(1, partitions.length)));
    this.stuckAfterMs = stuckAfterMs;
    this.create = (p) => new WatchedWorker<D, R>(p.name, processor, { ...rest, connection, prefix: p.prefix, concurrency: each });
    this.workers = partitions.map((p) => this.create(p));
    const { metrics, logger } = rt;
    for (const p of partitions) metrics?.partitionConsumers.set(labelsOf(p), 1);
    this.probe = (p) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.min(5000, stuckAfterMs))));
      const read = rt.redis.exists(`${p.prefix}:${p.name}:meta`).then(
        () => true,
        () => false,
      );
      return Promise.race([read, timeout]).finally(() => clearTimeout(timer));
    };
    this.watchdog = setInterval(() => void this.watch(metrics, logger), Math.max(250, Math.floor(stuckAfterMs / 4)));
    this.watchdog.unref();
  }

  /** Ready only when every partition's worker runs and none is stuck. */
  isRunning(): boolean {
    return this.workers.every((w) => w.isRunning()) && this.stuckPartitions().length === 0;
  }

  /** The partitions without a working consumer (stuck, or replaced and not fetching yet): readiness names them. */
  stuckPartitions(now = Date.now()): string[] {
    return this.workers.filter((_, i) => this.down(i, now)).map((w) => w.name);
  }

  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'failed', listener: (job: Parameters<Processor<D, R>>[0] | undefined, err: Error) => void): void;
  on(event: 'error' | 'failed', listener: (...args: never[]) => void): void {
    this.listeners.push({ event, listener });
    for (const w of this.workers) attach(w, { event, listener });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    await Promise.all(this.workers.map((w) => w.close()));
  }

  /** A partition is down while its worker is stuck, or was replaced and has not fetched yet. */
  private down(i: number, now: number): boolean {
    const worker = this.workers[i]!;
    return worker.stuckForMs(now) >= this.stuckAfterMs || (this.replaced.has(i) && !worker.progressed);
  }

  private async watch(metrics: Pick<Metrics, 'partitionConsumers' | 'partitionConsumerRestarts'> | undefined, logger: Logger | undefined): Promise<void> {
    if (this.closed || this.watching) return;
    this.watching = true;
    try {
      const now = Date.now();
      for (let i = 0; i < this.workers.length; i++) {
        const p = this.partitions[i]!;
        const worker = this.workers[i]!;
        if (this.replaced.has(i) && worker.progressed) this.replaced.delete(i);
        metrics?.partitionConsumers.set(labelsOf(p), this.down(i, now) ? 0 : 1);
        const stuckMs = worker.stuckForMs(now);
        if (stuckMs < this.stuckAfterMs) continue;
        // Replace the worker only when its queue answers: with Redis or the
        // partition's master unreachable a new worker would be as stuck, and
        // the partition is reported down until it comes back.
        const reachable = await this.probe(p);
        logger?.warn(
          { event: 'partition_consumer_stuck', queue: p.name, prefix: p.prefix, stuckMs, fetchPendingMs: worker.fetchSince ? now - worker.fetchSince : 0, inFlight: worker.inFlight, reachable },
          reachable ? 'a queue partition has no working consumer; its worker is replaced' : 'a queue partition has no working consumer; its queue does not answer',
        );
        if (!reachable || this.closed) continue;
        metrics?.partitionConsumerRestarts.inc(labelsOf(p));
        // Not awaited: the old worker may never finish its stuck command.
        worker.close(true).catch(() => undefined);
        const replacement = this.create(p);
        for (const l of this.listeners) attach(replacement, l);
        this.workers[i] = replacement;
        this.replaced.add(i);
      }
    } finally {
      this.watching = false;
    }
  }
}

function attach<D, R>(worker: WatchedWorker<D, R>, { event, listener }: Listener): void {
  (worker.on as (e: string, l: (...args: never[]) => void) => void)(event, listener);
}

/** The partition's labels: the queue's base name and its partition number. */
function labelsOf(p: ConsumedPartition): { queue: string; partition: string } {
  const m = /^(.*)-(\d+)$/.exec(p.name);
  return m ? { queue: m[1]!, partition: m[2]! } : { queue: p.name, partition: '0' };
}
