import { describe, expect, it } from 'vitest';
import { CallAbortedError, startDeadline } from './deadline';
import type { CallContext } from './provider';

const live = (timeoutMs: number, endsAt?: number): CallContext => ({ signal: new AbortController().signal, timeoutMs, ...(endsAt !== undefined ? { endsAt } : {}) });

describe('startDeadline', () => {
  it('takes the smallest of the caller budget, what is left until endsAt, and the provider cap', () => {
    const now = () => 10_000;
    const budgets = [
      startDeadline(live(5_000), 3_000, now),
      startDeadline(live(2_000), 3_000, now),
      startDeadline(live(2_000, 11_500), 3_000, now),
      startDeadline(live(2_000, 20_000), 3_000, now),
    ];
    expect(budgets.map((d) => d.ms)).toEqual([3_000, 2_000, 1_500, 2_000]);
    for (const d of budgets) d.dispose();
  });

  // The holder computed its budget inside its lease, then stalled (SIGSTOP, a
  // long GC pause) past the moment that budget ended: starting the call now
  // would send after the lease that allowed it, when another holder may have
  // taken the operation over. The call must not start.
  it('is already expired when endsAt has passed, whatever the budget in ms says', () => {
    const d = startDeadline(live(2_000, 9_000), 3_000, () => 10_000);
    expect(d.ms).toBe(0);
    expect(d.reason()).toBeInstanceOf(CallAbortedError);
    expect(d.reason()?.code).toBe('DEADLINE');
    d.dispose();
  });
});
