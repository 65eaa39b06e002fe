import type { DeliverJobData, WaitMark } from '@singleshot/core';
import type { OperationStore, WaitInput } from '@singleshot/store';
import type { WaitingPort } from './deliver-types';

/**
 * Operations this process holds back without claiming them. Each wait is
 * written to the operation's state (OperationStore.wait: `ops show`, the
 * dashboard), and the ones that no index in Redis lists (quiet hours, an open
 * breaker) are counted in memory for `singleshot_operations_waiting{reason}`
 * until their wake-up time passes; document waits are counted from Redis.
 * The map holds at most one entry per operation this process saw wait, and
 * forgets each once its wake-up time is past.
 */
export class WaitingBoard implements WaitingPort {
  private readonly until = new Map<string, { reason: WaitMark; untilMs: number }>();

  constructor(
    private readonly operations: Pick<OperationStore, 'wait'>,
    private readonly now: () => number = Date.now,
  ) {}

  async wait(job: Pick<DeliverJobData, 'operationKey' | 'messageKey' | 'recipient' | 'channel'>, wait: WaitInput): Promise<boolean> {
    if (!wait.waitingKey) this.until.set(job.operationKey, { reason: wait.reason, untilMs: wait.untilMs });
    return this.operations.wait(job, wait);
  }

  /** Waiting operations by reason, now (for the gauge). */
  counts(): Record<string, number> {
    const now = this.now();
    const counts: Record<string, number> = {};
    for (const [key, entry] of this.until) {
      // A little grace past the wake-up time: the job is picked up right after it.
      if (entry.untilMs + 1_000 < now) this.until.delete(key);
      else counts[entry.reason] = (counts[entry.reason] ?? 0) + 1;
    }
    return counts;
  }
}
