import { describe, expect, it } from 'vitest';
import { parseRetryAfter, retryDelayMs } from './backoff';

const schedule = [1_000, 5_000, 20_000] as const;
const fixed = (r: number) => () => r;
// Math.random() is in [0, 1): the largest value it can return.
const almostOne = 1 - Number.EPSILON;

describe('retryDelayMs', () => {
  it('stays within [1, schedule entry] for the lowest and highest random', () => {
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, random: fixed(0) })).toBe(1);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, random: fixed(almostOne) })).toBe(1_000);
    expect(retryDelayMs({ attempt: 2, scheduleMs: schedule, random: fixed(almostOne) })).toBe(5_000);
    expect(retryDelayMs({ attempt: 3, scheduleMs: schedule, random: fixed(0.5) })).toBe(10_001);
  });

  it('repeats the last entry past the end of the schedule', () => {
    expect(retryDelayMs({ attempt: 9, scheduleMs: schedule, random: fixed(almostOne) })).toBe(20_000);
  });

  it('treats attempt 0 or below as the first attempt', () => {
    expect(retryDelayMs({ attempt: 0, scheduleMs: schedule, random: fixed(almostOne) })).toBe(1_000);
  });

  it('uses 1 s when the schedule is empty', () => {
    expect(retryDelayMs({ attempt: 1, scheduleMs: [], random: fixed(almostOne) })).toBe(1_000);
  });

  it('is within bounds for many real random draws', () => {
    for (let attempt = 1; attempt <= 5; attempt++) {
      for (let i = 0; i < 200; i++) {
        const d = retryDelayMs({ attempt, scheduleMs: schedule });
        expect(d).toBeGreaterThanOrEqual(1);
        expect(d).toBeLessThanOrEqual(schedule[Math.min(attempt, schedule.length) - 1] as number);
      }
    }
  });

  it('never goes below a provider Retry-After', () => {
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: 30_000, random: fixed(0) })).toBe(30_000);
    // A shorter Retry-After does not shorten the jittered delay.
    expect(retryDelayMs({ attempt: 3, scheduleMs: schedule, retryAfterMs: 2, random: fixed(0.5) })).toBe(10_001);
    // Zero, negative or NaN Retry-After values are ignored.
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: -5, random: fixed(0) })).toBe(1);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: Number.NaN, random: fixed(0) })).toBe(1);
  });

  it('is capped, also above a Retry-After', () => {
    expect(retryDelayMs({ attempt: 3, scheduleMs: schedule, capMs: 700, random: fixed(almostOne) })).toBe(700);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: 3_600_000, random: fixed(0) })).toBe(600_000);
    expect(retryDelayMs({ attempt: 1, scheduleMs: schedule, retryAfterMs: 3_600_000, capMs: 60_000, random: fixed(0) })).toBe(60_000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2024, 0, 1, 12, 0, 0);

  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 3 ', now)).toBe(3_000);
  });

  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 01 Jan 2024 12:01:00 GMT', now)).toBe(60_000);
  });

  it('turns a date in the past into 0', () => {
    expect(parseRetryAfter('Mon, 01 Jan 2024 11:00:00 GMT', now)).toBe(0);
  });

  it('returns undefined when absent or unreadable', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
