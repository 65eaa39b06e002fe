import { Worker, type Processor, type WorkerOptions } from 'bullmq';
import { partitionQueueName } from '@singleshot/queues';
import type { KeyBuilder } from '@singleshot/store';
import type { Runtime } from './runtime';
import { RefusalAwareWorker } from './refusal-aware-worker';

/** A queue partition a worker consumes: its BullMQ name and prefix. */
export interface ConsumedPartition {
  name: string;
  prefix: string;
}

/**
 * The partitions of `base` (a queue name) this process consumes: `only` (e.g.
 * `delivery.partitions`) or all of the current layout, plus every partition of
 * the former layout while `redis.formerPartitions` is set (producers no longer
 * write there; its jobs drain). Throws a RangeError for a partition that does not exist.
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
};

/**
 * One BullMQ worker per consumed partition, sharing one connection (BullMQ
 * opens its own blocking connection per worker). `concurrency` is the process's
 * total, split evenly over the partitions (at least 1 each).
 */
export class PartitionWorkers<D, R> {
  readonly workers: Worker<D, R>[];

  constructor(
    rt: Pick<Runtime, 'connect' | 'redis'>,
    partitions: readonly ConsumedPartition[],
    processor: Processor<D, R>,
    options: PartitionWorkerOptions,
  ) {
    const { connectionName, shareClientConnection = false, concurrency = 1, ...rest } = options;
    const connection = shareClientConnection ? rt.redis : rt.connect('worker', connectionName);
    const each = Math.max(1, Math.ceil(concurrency / Math.max(1, partitions.length)));
    this.workers = partitions.map((p) => new RefusalAwareWorker<D, R>(p.name, processor, { ...rest, connection, prefix: p.prefix, concurrency: each }));
  }

  /** Ready only when every partition's worker runs. */
  isRunning(): boolean {
    return this.workers.every((w) => w.isRunning());
  }

  on(event: 'error', listener: (err: Error) => void): void;
  on(event: 'failed', listener: (job: Parameters<Processor<D, R>>[0] | undefined, err: Error) => void): void;
  on(event: 'error' | 'failed', listener: (...args: never[]) => void): void {
    for (const w of this.workers) (w.on as (e: string, l: (...args: never[]) => void) => void)(event, listener);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}
