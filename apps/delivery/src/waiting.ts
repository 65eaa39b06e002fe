import type { WaitMark } from '@singleshot/core';
import type { WaitingPort } from './deliver-types';

/**
 * Operations this process held back without a lock, counted in memory for
 * `singleshot_operations_waiting{reason}` until their wake-up time passes
 * (quiet hours, open breakers; document waits are counted from Redis). The
 * wait itself is in the operation's state, written by the claim
 * (include/wait.lua). The map holds at most one entry per operation this
 * process saw wait, and forgets each once its wake-up time is past.
 */
export class WaitingBoard implements WaitingPort {
  private readonly until = new Map<string, { reason: WaitMark; untilMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  note(operationKey: string, reason: WaitMark, untilMs: number): void {
    this.until.set(operationKey, { reason, untilMs });
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
