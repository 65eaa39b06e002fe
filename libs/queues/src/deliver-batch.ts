import type { Queue } from 'bullmq';
import { sha256Hex, type DeliverJobData } from '@singleshot/core';
import { DELIVER_OPTIONS, enqueueDeliveries, type Queues } from './queues';
import type { DeliverBatchJobData } from './schemas';

/** The BullMQ job name of a single-operation deliver job (jobId = operation key). */
export const DELIVER_JOB_NAME = 'deliver';
/** The BullMQ job name of a batch deliver job (several operations, of one message or of several). */
export const DELIVER_BATCH_JOB_NAME = 'batch';

/** A batch job to add: its partition's queue, its deterministic id, its operations. */
export interface PlannedBatch {
  queue: Queue<DeliverJobData>;
  jobId: string;
  data: DeliverBatchJobData;
}

/**
 * How a fan-out's operations become deliver jobs. Operations that go to the
 * same deliver queue and need no document are grouped into `batch` jobs of at
 * most `batchMax` operations (split evenly), whatever message they belong to:
 * the decision worker hands in the fan-outs of every decide job that ran in
 * one event-loop turn together (TurnCoalescer), so a batch may carry the
 * operations of several messages; a group of one,
 * and every operation with documents (the render wakes it by its job id),
 * stays an ordinary `deliver` job under its operation key. `batchMax` 1 turns
 * batching off.
 *
 * Batch ids are deterministic: the first operation's message key, the chunk
 * index and a hash of the chunk's operation keys (BullMQ ids may not contain
 * ':'), so the same operations add the same ids again, which BullMQ ignores;
 * the hash keeps a changed fan-out (a route added between two deliveries of
 * the decide job, or other companions in the batch) from hiding an operation
 * behind an old batch's id.
 */
export function planDeliverJobs(
  queues: Pick<Queues, 'deliverOf'>,
  jobs: readonly DeliverJobData[],
  batchMax: number,
): { singles: DeliverJobData[]; batches: PlannedBatch[] } {
  const singles: DeliverJobData[] = [];
  const batches: PlannedBatch[] = [];
  if (batchMax <= 1) return { singles: [...jobs], batches };
  const groups = new Map<string, { queue: Queue<DeliverJobData>; list: DeliverJobData[] }>();
  for (const job of jobs) {
    if (job.documents && job.documents.length > 0) {
      singles.push(job);
      continue;
    }
    const queue = queues.deliverOf(job.operationKey);
    const group = groups.get(queue.qualifiedName);
    if (group) group.list.push(job);
    else groups.set(queue.qualifiedName, { queue, list: [job] });
  }
  for (const { queue, list } of groups.values()) {
    const count = Math.ceil(list.length / batchMax);
    const size = Math.ceil(list.length / count);
    for (let chunk = 0; chunk < count; chunk++) {
      const operations = list.slice(chunk * size, (chunk + 1) * size);
      if (operations.length === 1) {
        singles.push(operations[0] as DeliverJobData);
        continue;
      }
      const first = operations[0] as DeliverJobData;
      const digest = sha256Hex(operations.map((o) => o.operationKey).join(',')).slice(0, 16);
      batches.push({ queue, jobId: `${first.messageKey}-b${chunk}-${digest}`, data: { operations } });
    }
  }
  return { singles, batches };
}

/**
 * Adds a fan-out's deliver jobs: batches and single jobs (see `planDeliverJobs`)
 * in parallel, so one round trip as before. Idempotent by job id: a partial
 * failure is repaired by the decide job's retry.
 */
export async function enqueueDeliveryJobs(queues: Pick<Queues, 'deliverOf'>, jobs: readonly DeliverJobData[], batchMax: number): Promise<void> {
  const { singles, batches } = planDeliverJobs(queues, jobs, batchMax);
  await Promise.all([
    enqueueDeliveries(queues, singles),
    ...batches.map(({ queue, jobId, data }) => batchQueue(queue).add(DELIVER_BATCH_JOB_NAME, data, { ...DELIVER_OPTIONS, jobId })),
  ]);
}

/**
 * The deliver queues are typed by their single-operation payload (what a
 * lookup by operation key finds); a batch job is the one other payload they
 * hold, added only here.
 */
function batchQueue(queue: Queue<DeliverJobData>): Queue<DeliverBatchJobData> {
  return queue as unknown as Queue<DeliverBatchJobData>;
}
