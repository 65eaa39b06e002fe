import type { DeliverJobData } from '@singleshot/core';
import type { OperationStore } from '@singleshot/store';
import type { WaitReason, WaitingPort } from './deliver-types';

/**
 * Operations this process holds back without claiming them (every provider of
 * the channel behind an open breaker). Each is written to the operation's
 * state (`waitingReason`, `waitingUntil`: `singleshot ops show`) and counted
 * in memory for `singleshot_operations_waiting{reason}` until its wake-up time
 * passes. The map holds at most one entry per operation this process saw
 * wait, and forgets each once its wake-up time is past.
 */
export class WaitingBoard implements WaitingPort {
  private readonly until = new Map<string, { reason: WaitReason; untilMs: number }>();

  constructor(
    private readonly operations: Pick<OperationStore, 'markWaiting'>,
    private readonly now: () => number = Date.now,
  ) {}

  async wait(job: Pick<DeliverJobData, 'operationKey' | 'messageKey' | 'recipient' | 'channel'>, reason: WaitReason, untilMs: number): Promise<void> {
    this.until.set(job.operationKey, { reason, untilMs });
    await this.operations.markWaiting(job, reason, untilMs);
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
