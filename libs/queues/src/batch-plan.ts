import { sha256Hex } from '@singleshot/core';

/** The BullMQ job name of a job carrying several members (messages or operations), in every queue. */
export const BATCH_JOB_NAME = 'batch';

/** One batch job to add: its queue, its deterministic id, the members it carries. */
export interface PlannedBatch<Q, T> {
  queue: Q;
  jobId: string;
  members: T[];
}

/** What a set of items becomes: items that keep a job of their own, and batch jobs. */
export interface BatchPlan<Q, T> {
  singles: T[];
  batches: PlannedBatch<Q, T>[];
}

/** How `planBatches` groups items: the same rules for decide and deliver, these are the differences. */
export interface BatchPlanSpec<Q, T> {
  /** The item's own job id (message key, operation key): dedup and the batch id's hash. */
  keyOf(item: T): string;
  /** The partition queue the item's own job would go to; a batch never spans two. */
  queueOf(item: T): Q;
  /** Members per batch job at most; 1 or less turns batching off. */
  max: number;
  /** False keeps the item in a job of its own (a delivery with documents: the render wakes it by its key). */
  canBatch?(item: T): boolean;
}

/**
 * Groups items (decide jobs of the messages ingest accepted in one turn, or
 * the deliver jobs of the fan-outs decided in one turn) into batch jobs per
 * partition queue, at most `max` each, split evenly; a group of one, and an
 * item that cannot be batched, stays a job of its own under its key.
 *
 * A batch's id is its first member's message key, the chunk index and a hash
 * of its members' keys (BullMQ ids may not contain ':'): the same members
 * make the same id again, which BullMQ ignores, and a changed set (a route
 * added between two runs of a decide job, other companions in a turn) makes
 * another id, so no member hides behind a batch it is not in.
 *
 * An item handed in twice (two arrivals of one message that both enqueued in
 * one turn) is planned once: a batch holding it twice would run it twice at once.
 * Pure: no I/O, so the plan can be inspected before it is added.
 */
export function planBatches<Q, T extends { messageKey: string }>(items: readonly T[], spec: BatchPlanSpec<Q, T>): BatchPlan<Q, T> {
  const singles: T[] = [];
  const batches: PlannedBatch<Q, T>[] = [];
  if (spec.max <= 1) return { singles: [...items], batches };
  const { keyOf, queueOf, canBatch } = spec;
  const seen = new Set<string>();
  const groups = new Map<Q, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    if (seen.has(key)) continue;
    seen.add(key);
    if (canBatch && !canBatch(item)) {
      singles.push(item);
      continue;
    }
    const queue = queueOf(item);
    const list = groups.get(queue);
    if (list) list.push(item);
    else groups.set(queue, [item]);
  }
  for (const [queue, list] of groups) {
    const count = Math.ceil(list.length / spec.max);
    const size = Math.ceil(list.length / count);
    for (let chunk = 0; chunk < count; chunk++) {
      const members = list.slice(chunk * size, (chunk + 1) * size);
      const first = members[0] as T;
      if (members.length === 1) {
        singles.push(first);
        continue;
      }
      const digest = sha256Hex(members.map(keyOf).join(',')).slice(0, 16);
      batches.push({ queue, jobId: `${first.messageKey}-b${chunk}-${digest}`, members });
    }
  }
  return { singles, batches };
}
