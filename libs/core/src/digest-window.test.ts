import { describe, expect, it } from 'vitest';
import { digestGroupId, digestId, digestWindowAt, nextDailyAt } from './digest-window';

describe('digest windows', () => {
  it('fixed starts now; aligned starts at the last multiple of the window', () => {
    expect(digestWindowAt(3_000, 'fixed', 10_500)).toEqual({ start: 10_500, closeAt: 13_500 });
    expect(digestWindowAt(3_000, 'aligned', 10_500)).toEqual({ start: 9_000, closeAt: 12_000 });
  });

  it('daily closes at the next local time, across a spring-forward night too', () => {
    // 2026-03-28 12:00 UTC; Berlin goes from +01:00 to +02:00 on the 29th.
    const at = Date.UTC(2026, 2, 28, 12, 0);
    expect(nextDailyAt('08:00', 'Europe/Berlin', at)).toBe(Date.UTC(2026, 2, 29, 6, 0));
    expect(nextDailyAt('13:30', 'Europe/Berlin', at)).toBe(Date.UTC(2026, 2, 28, 12, 30));
    // At exactly the daily time the next one is a day later.
    expect(nextDailyAt('13:00', 'Europe/Berlin', at)).toBe(Date.UTC(2026, 2, 29, 11, 0));
  });

  it('group and digest ids are stable and distinct', () => {
    const g = digestGroupId('r', 'a@x', 'k');
    expect(g).toBe(digestGroupId('r', 'a@x', 'k'));
    expect(g).not.toBe(digestGroupId('r', 'a@x', 'k2'));
    expect(digestId(g, 1)).not.toBe(digestId(g, 2));
  });
});
