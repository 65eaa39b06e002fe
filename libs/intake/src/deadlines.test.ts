import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Deadlines } from './deadlines';

// Fake timers and a fake clock: every step below is exact, nothing waits on the machine.
let now = 0;
beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Deadlines', () => {
  it('expires each deadline once, never before its time and at most one tick after it', () => {
    const deadlines = new Deadlines(1_000, () => now);
    const fired: string[] = [];
    deadlines.start(() => fired.push('a'));
    now = 400;
    deadlines.start(() => fired.push('b'));
    for (; now < 999; now += 100) vi.advanceTimersByTime(100);
    expect(fired).toEqual([]);
    // One tick is 100 ms here (a tenth of the length).
    now = 1_099;
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['a']);
    now = 1_499;
    vi.advanceTimersByTime(400);
    expect(fired).toEqual(['a', 'b']);
    expect(deadlines.size).toBe(0);
    now = 5_000;
    vi.advanceTimersByTime(5_000);
    expect(fired).toEqual(['a', 'b']);
  });

  it('does not fire a cancelled deadline, and keeps no timer once nothing waits', () => {
    const deadlines = new Deadlines(500, () => now);
    const fired: string[] = [];
    const keep = () => fired.push('kept');
    const drop = () => fired.push('dropped');
    deadlines.start(drop);
    deadlines.start(keep);
    deadlines.cancel(drop);
    expect(deadlines.size).toBe(1);
    now = 600;
    vi.advanceTimersByTime(600);
    expect(fired).toEqual(['kept']);
    expect(vi.getTimerCount()).toBe(0);
    deadlines.cancel(keep);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs one timer however many deadlines wait', () => {
    const deadlines = new Deadlines(5_000, () => now);
    for (let i = 0; i < 1_000; i++) deadlines.start(() => undefined);
    expect(vi.getTimerCount()).toBe(1);
    expect(deadlines.size).toBe(1_000);
  });
});
