import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isValidTimeZone,
  nextAllowedAt,
  parseQuietHours,
  QuietHoursError,
  quietUntil,
  type QuietHours,
} from './quiet-hours';

// Every expected instant is a UTC literal worked out by hand from the zone's
// known offsets (given beside it), never through the module under test.
const utc = (y: number, mo: number, d: number, h: number, mi = 0, s = 0, ms = 0) => Date.UTC(y, mo - 1, d, h, mi, s, ms);
const HOUR = 3_600_000;
const w = (start: string, end: string, timezone: string): QuietHours => ({ start, end, timezone });

// Independent reading of an instant's local wall clock and offset (its own
// formatters, not the module's), to check what the returned instants mean.
const wallFmt = new Map<string, Intl.DateTimeFormat>();
function wall(at: number, timeZone: string): string {
  let f = wallFmt.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, hourCycle: 'h23', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    wallFmt.set(timeZone, f);
  }
  return f.format(at);
}
const offsetName = (at: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;

describe('quietUntil: window crossing midnight (21:00–08:00 Europe/Berlin, CEST +2 in June)', () => {
  const q = w('21:00', '08:00', 'Europe/Berlin');
  it('22:00 local is inside and ends at 08:00 the next day', () => {
    expect(quietUntil(q, utc(2026, 6, 15, 20))).toBe(utc(2026, 6, 16, 6));
  });
  it('07:59 local is inside and ends at 08:00 the same day', () => {
    expect(quietUntil(q, utc(2026, 6, 16, 5, 59))).toBe(utc(2026, 6, 16, 6));
    expect(quietUntil(q, utc(2026, 6, 16, 5, 59, 59, 999))).toBe(utc(2026, 6, 16, 6));
  });
  it('08:00 exactly is not inside (end exclusive)', () => {
    expect(quietUntil(q, utc(2026, 6, 16, 6))).toBeUndefined();
  });
  it('20:59 (and 20:59:59.999) is not inside', () => {
    expect(quietUntil(q, utc(2026, 6, 15, 18, 59))).toBeUndefined();
    expect(quietUntil(q, utc(2026, 6, 15, 18, 59, 59, 999))).toBeUndefined();
  });
  it('21:00 exactly is inside (start inclusive) and ends at 08:00 the next day', () => {
    expect(quietUntil(q, utc(2026, 6, 15, 19))).toBe(utc(2026, 6, 16, 6));
  });
  it('local midnight, still the previous day in UTC, ends at 08:00 that local day', () => {
    expect(quietUntil(q, utc(2026, 6, 15, 22))).toBe(utc(2026, 6, 16, 6));
  });
  it('a window ending at 00:00 ends at the next local midnight', () => {
    expect(quietUntil(w('22:00', '00:00', 'Europe/Berlin'), utc(2026, 6, 15, 21))).toBe(utc(2026, 6, 15, 22));
    expect(quietUntil(w('22:00', '00:00', 'Europe/Berlin'), utc(2026, 6, 15, 22))).toBeUndefined();
  });
});

describe('quietUntil: non-crossing window (12:00–14:00 Europe/Berlin, CET +1 in January)', () => {
  const q = w('12:00', '14:00', 'Europe/Berlin');
  it('12:00 exactly is inside (start inclusive) and ends at 14:00', () => {
    expect(quietUntil(q, utc(2026, 1, 20, 11))).toBe(utc(2026, 1, 20, 13));
  });
  it('13:59:59.999 is inside and ends at 14:00 the same day', () => {
    expect(quietUntil(q, utc(2026, 1, 20, 12, 59, 59, 999))).toBe(utc(2026, 1, 20, 13));
  });
  it('14:00 exactly is not inside (end exclusive)', () => {
    expect(quietUntil(q, utc(2026, 1, 20, 13))).toBeUndefined();
  });
  it('11:59:59.999, 23:00 and 02:00 are not inside', () => {
    expect(quietUntil(q, utc(2026, 1, 20, 10, 59, 59, 999))).toBeUndefined();
    expect(quietUntil(q, utc(2026, 1, 20, 22))).toBeUndefined();
    expect(quietUntil(q, utc(2026, 1, 20, 1))).toBeUndefined();
  });
});

describe('quietUntil: Europe/Berlin spring forward (2026-03-29, 02:00 CET +1 → 03:00 CEST +2 at 01:00Z)', () => {
  const tz = 'Europe/Berlin';
  it('a window ending at 02:30, inside the gap, ends at the first instant after it (03:00 CEST)', () => {
    const q = w('21:00', '02:30', tz);
    expect(quietUntil(q, utc(2026, 3, 28, 21))).toBe(utc(2026, 3, 29, 1)); // 22:00 CET
    expect(quietUntil(q, utc(2026, 3, 29, 0, 59, 59, 999))).toBe(utc(2026, 3, 29, 1)); // 01:59:59.999 CET
    expect(wall(utc(2026, 3, 29, 1), tz)).toBe('03:00:00');
  });
  it('the first instant after the gap (03:00 CEST) is outside a window ending at 02:30', () => {
    expect(quietUntil(w('21:00', '02:30', tz), utc(2026, 3, 29, 1))).toBeUndefined();
  });
  it('21:00–08:00 across the change lasts 10 hours of real time and ends at 08:00 CEST', () => {
    const at = utc(2026, 3, 28, 20); // 21:00 CET
    const end = quietUntil(w('21:00', '08:00', tz), at);
    expect(end).toBe(utc(2026, 3, 29, 6));
    expect((end as number) - at).toBe(10 * HOUR);
    expect(wall(end as number, tz)).toBe('08:00:00');
  });
  it('a window starting at 02:30, inside the gap, begins with the first instant after it', () => {
    const q = w('02:30', '05:00', tz);
    expect(quietUntil(q, utc(2026, 3, 29, 0, 59, 59, 999))).toBeUndefined(); // 01:59:59.999 CET
    expect(quietUntil(q, utc(2026, 3, 29, 1))).toBe(utc(2026, 3, 29, 3)); // 03:00 CEST → 05:00 CEST
  });
  it('a window whose start and end both fall in the gap (02:45–02:30) goes on to the next day\'s 02:30', () => {
    const q = w('02:45', '02:30', tz);
    expect(quietUntil(q, utc(2026, 3, 29, 0, 59))).toBe(utc(2026, 3, 30, 0, 30)); // 01:59 CET → 02:30 CEST on the 30th
    expect(quietUntil(q, utc(2026, 3, 29, 1))).toBe(utc(2026, 3, 30, 0, 30)); // 03:00 CEST
  });
});

describe('quietUntil: Europe/Berlin fall back (2026-10-25, 03:00 CEST +2 → 02:00 CET +1 at 01:00Z)', () => {
  const tz = 'Europe/Berlin';
  const q = w('21:00', '02:30', tz);
  it('a window ending at 02:30, which occurs twice, ends at the first occurrence (02:30 CEST)', () => {
    const at = utc(2026, 10, 24, 20); // 22:00 CEST
    expect(quietUntil(q, at)).toBe(utc(2026, 10, 25, 0, 30));
    expect(utc(2026, 10, 25, 0, 30) - at).toBe(4.5 * HOUR);
  });
  it('02:45 CEST, the first pass through the repeated hour, is outside by its wall clock', () => {
    expect(quietUntil(q, utc(2026, 10, 25, 0, 45))).toBeUndefined();
  });
  it('02:00 and 02:10 CET, the second pass, are inside again and end at the second 02:30 (CET)', () => {
    expect(quietUntil(q, utc(2026, 10, 25, 1))).toBe(utc(2026, 10, 25, 1, 30));
    expect(quietUntil(q, utc(2026, 10, 25, 1, 10))).toBe(utc(2026, 10, 25, 1, 30));
    expect(offsetName(utc(2026, 10, 25, 1, 30), tz)).toBe('GMT+01:00');
  });
  it('21:00–08:00 across the change lasts 12 hours of real time and ends at 08:00 CET', () => {
    const at = utc(2026, 10, 24, 19); // 21:00 CEST
    const end = quietUntil(w('21:00', '08:00', tz), at);
    expect(end).toBe(utc(2026, 10, 25, 7));
    expect((end as number) - at).toBe(12 * HOUR);
    expect(wall(end as number, tz)).toBe('08:00:00');
  });
});

describe('quietUntil: America/New_York spring forward (2026-03-08, 02:00 EST -5 → 03:00 EDT -4 at 07:00Z)', () => {
  const tz = 'America/New_York';
  it('a window ending at 02:30, inside the gap, ends at the first instant after it (03:00 EDT)', () => {
    const q = w('22:00', '02:30', tz);
    expect(quietUntil(q, utc(2026, 3, 8, 4))).toBe(utc(2026, 3, 8, 7)); // 23:00 EST on the 7th
    expect(quietUntil(q, utc(2026, 3, 8, 6, 59, 59, 999))).toBe(utc(2026, 3, 8, 7)); // 01:59:59.999 EST
    expect(quietUntil(q, utc(2026, 3, 8, 7))).toBeUndefined(); // 03:00 EDT
    expect(wall(utc(2026, 3, 8, 7), tz)).toBe('03:00:00');
  });
  it('21:00–08:00 across the change lasts 10 hours of real time and ends at 08:00 EDT', () => {
    const at = utc(2026, 3, 8, 2); // 21:00 EST on the 7th
    const end = quietUntil(w('21:00', '08:00', tz), at);
    expect(end).toBe(utc(2026, 3, 8, 12));
    expect((end as number) - at).toBe(10 * HOUR);
    expect(wall(end as number, tz)).toBe('08:00:00');
  });
});

describe('quietUntil: America/New_York fall back (2026-11-01, 02:00 EDT -4 → 01:00 EST -5 at 06:00Z)', () => {
  const tz = 'America/New_York';
  const q = w('22:00', '01:30', tz);
  it('a window ending at 01:30, which occurs twice, ends at the first occurrence (01:30 EDT)', () => {
    expect(quietUntil(q, utc(2026, 11, 1, 3))).toBe(utc(2026, 11, 1, 5, 30)); // 23:00 EDT on Oct 31
  });
  it('01:45 EDT is outside; 01:10 EST, the second pass, is inside and ends at 01:30 EST', () => {
    expect(quietUntil(q, utc(2026, 11, 1, 5, 45))).toBeUndefined();
    expect(quietUntil(q, utc(2026, 11, 1, 6, 10))).toBe(utc(2026, 11, 1, 6, 30));
    expect(offsetName(utc(2026, 11, 1, 6, 30), tz)).toBe('GMT-05:00');
  });
  it('21:00–08:00 across the change lasts 12 hours of real time and ends at 08:00 EST', () => {
    const at = utc(2026, 11, 1, 1); // 21:00 EDT on Oct 31
    const end = quietUntil(w('21:00', '08:00', tz), at);
    expect(end).toBe(utc(2026, 11, 1, 13));
    expect((end as number) - at).toBe(12 * HOUR);
    expect(wall(end as number, tz)).toBe('08:00:00');
  });
});

describe('quietUntil: other zones', () => {
  it('Asia/Kolkata (+05:30): 22:00 IST ends at 08:00 IST next day; 08:00 IST is outside', () => {
    const q = w('21:00', '08:00', 'Asia/Kolkata');
    expect(quietUntil(q, utc(2026, 6, 1, 16, 30))).toBe(utc(2026, 6, 2, 2, 30));
    expect(quietUntil(q, utc(2026, 6, 2, 2, 30))).toBeUndefined();
  });
  it('Asia/Kolkata (+05:30): a window with minutes, 12:15–12:45, read at 12:20 IST', () => {
    expect(quietUntil(w('12:15', '12:45', 'Asia/Kolkata'), utc(2026, 6, 1, 6, 50))).toBe(utc(2026, 6, 1, 7, 15));
  });
  it('Pacific/Auckland (NZDT +13): local day ahead of UTC, 23:00 ends at 07:00 the next local day', () => {
    expect(quietUntil(w('22:00', '07:00', 'Pacific/Auckland'), utc(2026, 1, 15, 10))).toBe(utc(2026, 1, 15, 18));
  });
  it('Pacific/Auckland spring forward (2026-09-27, NZST +12 → NZDT +13): 21:00–08:00 lasts 10 hours', () => {
    const at = utc(2026, 9, 26, 9); // 21:00 NZST
    const end = quietUntil(w('21:00', '08:00', 'Pacific/Auckland'), at);
    expect(end).toBe(utc(2026, 9, 26, 19));
    expect((end as number) - at).toBe(10 * HOUR);
  });
});

describe('quietUntil: properties over random instants, windows and zones', () => {
  const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'Australia/Lord_Howe', 'UTC'];
  const hhmm = fc.integer({ min: 0, max: 1439 }).map((m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
  const insideByWall = (q: QuietHours, at: number) => {
    const hm = wall(at, q.timezone).slice(0, 5);
    return q.start < q.end ? hm >= q.start && hm < q.end : hm >= q.start || hm < q.end;
  };
  it('deferred exactly when the wall clock is inside; the end is later, its wall time is end (or a DST change), the ms before it is inside', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        hhmm,
        hhmm,
        fc.integer({ min: utc(2020, 1, 1, 0), max: utc(2030, 1, 1, 0) }),
        (timezone, start, end, at) => {
          fc.pre(start !== end);
          const q = w(start, end, timezone);
          const until = quietUntil(q, at);
          expect(until !== undefined).toBe(insideByWall(q, at));
          if (until === undefined) return;
          expect(until).toBeGreaterThan(at);
          expect(insideByWall(q, until - 1)).toBe(true);
          expect(insideByWall(q, until)).toBe(false);
          const atChange = offsetName(until - 1, timezone) !== offsetName(until, timezone);
          if (!atChange) expect(wall(until, timezone)).toBe(`${end}:00`);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('nextAllowedAt', () => {
  const q = w('21:00', '08:00', 'Europe/Berlin');
  it('without quiet hours returns at itself, not deferred', () => {
    expect(nextAllowedAt(undefined, utc(2026, 6, 15, 20))).toEqual({ at: utc(2026, 6, 15, 20), deferred: false });
  });
  it('outside the window returns at itself, not deferred', () => {
    expect(nextAllowedAt(q, utc(2026, 6, 15, 10))).toEqual({ at: utc(2026, 6, 15, 10), deferred: false });
  });
  it('inside the window returns the end of the window, deferred', () => {
    expect(nextAllowedAt(q, utc(2026, 6, 15, 20))).toEqual({ at: utc(2026, 6, 16, 6), deferred: true });
  });
});

describe('parseQuietHours', () => {
  const fieldOf = (input: unknown) => {
    try {
      parseQuietHours(input);
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      expect(err).toBeInstanceOf(QuietHoursError);
      expect((err as QuietHoursError).code).toBe('INVALID_INPUT');
      return (err as QuietHoursError).field;
    }
    return 'accepted';
  };
  it('accepts a valid window and returns its fields', () => {
    expect(parseQuietHours({ start: '21:00', end: '08:00', timezone: 'Europe/Berlin' })).toEqual(w('21:00', '08:00', 'Europe/Berlin'));
    expect(parseQuietHours({ start: '00:00', end: '23:59', timezone: 'UTC' })).toEqual(w('00:00', '23:59', 'UTC'));
  });
  it('refuses hour 25 and 24 (00–23 only)', () => {
    expect(fieldOf({ start: '25:00', end: '08:00', timezone: 'UTC' })).toBe('start');
    expect(fieldOf({ start: '21:00', end: '24:00', timezone: 'UTC' })).toBe('end');
  });
  it('refuses "8:00": strict HH:MM needs two-digit hours', () => {
    expect(fieldOf({ start: '21:00', end: '8:00', timezone: 'UTC' })).toBe('end');
  });
  it('refuses minute 60, seconds, spaces and non-strings', () => {
    expect(fieldOf({ start: '12:60', end: '14:00', timezone: 'UTC' })).toBe('start');
    expect(fieldOf({ start: '12:00:00', end: '14:00', timezone: 'UTC' })).toBe('start');
    expect(fieldOf({ start: ' 12:00', end: '14:00', timezone: 'UTC' })).toBe('start');
    expect(fieldOf({ start: 1200, end: '14:00', timezone: 'UTC' })).toBe('start');
  });
  it('refuses an unknown time zone ("Mars/Base"), an empty one and a missing one', () => {
    expect(fieldOf({ start: '21:00', end: '08:00', timezone: 'Mars/Base' })).toBe('timezone');
    expect(fieldOf({ start: '21:00', end: '08:00', timezone: '' })).toBe('timezone');
    expect(fieldOf({ start: '21:00', end: '08:00' })).toBe('timezone');
  });
  it('refuses start equal to end (no window)', () => {
    expect(fieldOf({ start: '08:00', end: '08:00', timezone: 'UTC' })).toBe('window');
  });
  it('refuses a value that is not an object', () => {
    expect(fieldOf(null)).toBe('window');
    expect(fieldOf('21:00-08:00')).toBe('window');
    expect(fieldOf([])).toBe('window');
  });
  it('quietUntil refuses an unparsed bad window and a non-finite instant', () => {
    expect(() => quietUntil(w('8:00', '09:00', 'UTC'), 0)).toThrow(QuietHoursError);
    expect(() => quietUntil(w('08:00', '09:00', 'Mars/Base'), 0)).toThrow(QuietHoursError);
    expect(() => quietUntil(w('08:00', '09:00', 'UTC'), Number.NaN)).toThrow(RangeError);
  });
});

describe('isValidTimeZone', () => {
  it('knows IANA zones and UTC', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Pacific/Auckland')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
  });
  it('refuses an unknown zone and the empty string', () => {
    expect(isValidTimeZone('Mars/Base')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});
