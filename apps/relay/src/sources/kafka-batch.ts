import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Logger } from '@singleshot/observability';
import { AcceptedPrefix, commitOffsetAfter, type Slots } from './kafka-progress';

/** Protocol errors that mean this relay's group generation is over: a rebalance, or the coordinator forgot it. */
const GROUP_CHANGED = new Set(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'FENCED_INSTANCE_ID']);

/** True for an error (kafkajs protocol error type) that ends the current group generation. */
export function isGroupChange(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && GROUP_CHANGED.has(type);
}

export interface BatchDeps {
  /** Records in acceptance at once, across the source's partitions. */
  slots: Slots;
  /** Aborted when the relay stops. */
  signal: AbortSignal;
  /** Hands one record to acceptance; true once it is done (accepted, a duplicate, or dead), false when the relay stopped first. Never rejects. */
  handle(topic: string, partition: number, message: KafkaMessage): Promise<boolean>;
  /** How often to heartbeat and commit while the batch is in acceptance. */
  tickMs: number;
  logger: Logger;
}

/**
 * One fetched batch of one partition (kafkajs `eachBatch`, auto-resolve and
 * auto-commit off). Records go to acceptance several at once; the partition's
 * offset is resolved and committed only over the unbroken run of done records
 * from the batch's start (AcceptedPrefix), every tick and at the end. While
 * records wait (Redis away) it keeps heartbeating, so the group does not take
 * the partition away for a slow acceptance. When the generation ends (a
 * rebalance, seen by a heartbeat or a commit) it starts nothing more, commits
 * no further, and returns without waiting: what is still in acceptance
 * finishes on its own, uncommitted, and the partition's next owner reads it
 * again, an ordinary duplicate.
 */
export async function processBatch(payload: EachBatchPayload, deps: BatchDeps): Promise<void> {
  const { batch } = payload;
  const { topic, partition, messages } = batch;
  const offsets = messages.map((m) => m.offset);
  const prefix = new AcceptedPrefix(messages.length);
  let committed = 0;
  let closed = false;
  let changed = false;
  let onChange: () => void = () => undefined;
  const groupChanged = new Promise<void>((resolve) => (onChange = resolve));
  const markChanged = () => {
    changed = true;
    onChange();
  };

  const commitOnce = async (): Promise<void> => {
    const count = prefix.length;
    // After a generation ended nothing of this batch is committed: the partition may have another owner already.
    if (closed || changed || count <= committed) return;
    const offset = commitOffsetAfter(offsets, count, batch.lastOffset()) as string;
    payload.resolveOffset((messages[count - 1] as KafkaMessage).offset);
    try {
      await payload.commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset }] }] });
      committed = count;
    } catch (err) {
      if (isGroupChange(err)) markChanged();
      // Otherwise a later tick or the batch's end commits the same prefix again; a relay dying first only costs duplicates.
      else deps.logger.warn({ event: 'source_commit_failed', topic, partition, offset, err: { message: (err as Error).message } }, 'offset commit failed; trying again');
    }
  };
  let commits: Promise<void> = Promise.resolve();
  const commit = () => (commits = commits.then(commitOnce));

  const ticker = setInterval(() => {
    payload.heartbeat().catch((err: unknown) => {
      if (isGroupChange(err)) markChanged();
    });
    void commit();
  }, deps.tickMs);
  const inFlight: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < messages.length; i++) {
      if (changed || !payload.isRunning() || payload.isStale()) break;
      if (!(await deps.slots.acquire(deps.signal))) break;
      if (changed || !payload.isRunning() || payload.isStale()) {
        deps.slots.release();
        break;
      }
      const index = i;
      inFlight.push(
        deps
          .handle(topic, partition, messages[index] as KafkaMessage)
          .then((done) => {
            if (done) prefix.accept(index);
          })
          .finally(() => deps.slots.release()),
      );
    }
    await Promise.race([Promise.all(inFlight), groupChanged]);
    await commit();
  } finally {
    clearInterval(ticker);
    closed = true;
  }
}
