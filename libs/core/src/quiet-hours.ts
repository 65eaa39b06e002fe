/**
 * Quiet hours: a daily window of local wall-clock time, in the recipient's
 * IANA time zone, during which nothing is sent. Pure: the caller passes the
 * instant (ms since the epoch), so the rules are tested without clocks.
 *
 * Semantics (docs/scheduling.md, "Quiet hours"):
 * - The window is [start, end) in local time: start inclusive, end exclusive.
 *   start > end crosses midnight (21:00–08:00); start === end is refused by
 *   the parser (it would mean "never" or "always", and either is a mistake).
 * - Whether an instant is inside depends only on its local wall-clock time,
 *   so an instant in the repeated hour of a fall-back day is inside or outside
 *   by what the clock on the wall says at that moment.
 * - The window ends at the first instant after `at` whose local time is `end`.
 *   On a fall-back day where `end` occurs twice that is the first occurrence
 *   (or the second, for an instant already past the first one and back inside
 *   by the repeated wall-clock time). On a spring-forward day where `end` does
 *   not exist the window ends at the first valid instant after the gap (the
 *   transition itself: 03:00 local in Europe/Berlin).
 *
 * All zone arithmetic goes through Intl.DateTimeFormat (ICU's tz data), so no
 * dependency and no hand-written rules that would go stale.
 */

/** A validated quiet-hours window (see {@link parseQuietHours}). */
export interface QuietHours {
  /** Local wall-clock start, "HH:MM" (24 h, two digits each), inclusive. */
  start: string;
  /** Local wall-clock end, "HH:MM" (24 h, two digits each), exclusive. */
  end: string;
  /** IANA time zone the times are read in, e.g. "Europe/Berlin". */
  timezone: string;
}

/** Which part of a quiet-hours window is invalid. */
export type QuietHoursField = 'start' | 'end' | 'timezone' | 'window';

/**
 * Thrown for an invalid quiet-hours window. A TypeError (the value has the
 * wrong shape), with a `code` and the offending `field` so callers can name
 * the problem in a 4xx or a config error without reading the message.
 */
export class QuietHoursError extends TypeError {
  readonly code = 'INVALID_INPUT';
  readonly field: QuietHoursField;
  constructor(message: string, field: QuietHoursField) {
    super(message);
    this.name = 'QuietHoursError';
    this.field = field;
  }
}

// Strict: two-digit hours 00–23 and minutes 00–59. "8:00" is refused rather
// than guessed at, so a config typo ("8:0", "080") never becomes a window.
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const MINUTE = 60_000;
const DAY = 86_400_000;

// Building a DateTimeFormat loads ICU zone data and is far slower than
// formatting with one, and the same few zones are asked for over and over.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let fmt = formatters.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      // h23: midnight is 00, never 24 (hour12: false gives "24" on some ICU versions).
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, fmt);
  }
  return fmt;
}

/** True when `tz` is a time zone this runtime's Intl knows (an IANA name such as "Europe/Berlin"). */
export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    formatterFor(tz);
    return true;
  } catch (err) {
    if (err instanceof RangeError) return false;
    throw err;
  }
}

function minutesOf(value: unknown, field: 'start' | 'end'): number {
  const m = typeof value === 'string' ? HH_MM.exec(value) : null;
  if (!m) {
    throw new QuietHoursError(
      `quiet hours ${field} must be "HH:MM" (24 h, two digits each, 00:00–23:59), got ${JSON.stringify(value)}`,
      field,
    );
  }
  return Number(m[1]) * 60 + Number(m[2]);
}

function checkZone(value: unknown): string {
  if (typeof value !== 'string' || !isValidTimeZone(value)) {
    throw new QuietHoursError(
      `quiet hours timezone must be an IANA time zone such as "Europe/Berlin", got ${JSON.stringify(value)}`,
      'timezone',
    );
  }
  return value;
}

/**
 * Validates an untrusted quiet-hours value and returns it as a {@link QuietHours}.
 * Throws a {@link QuietHoursError} (a TypeError) for a value that is not an
 * object, a start or end that is not strict "HH:MM", an unknown time zone, or
 * start equal to end.
 */
export function parseQuietHours(input: unknown): QuietHours {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new QuietHoursError('quiet hours must be an object {start, end, timezone}', 'window');
  }
  const { start, end, timezone } = input as Record<string, unknown>;
  const startMin = minutesOf(start, 'start');
  const endMin = minutesOf(end, 'end');
  const zone = checkZone(timezone);
  if (startMin === endMin) {
    throw new QuietHoursError(`quiet hours start and end are both ${String(start)}: no window`, 'window');
  }
  return { start: start as string, end: end as string, timezone: zone };
}

interface LocalTime {
  year: number;
  month: number; // 1–12
  day: number;
  /** Milliseconds since local midnight. */
  msOfDay: number;
}

function localTime(fmt: Intl.DateTimeFormat, at: number): LocalTime {
  const n: Record<string, number> = {};
  for (const p of fmt.formatToParts(at)) if (p.type !== 'literal') n[p.type] = Number(p.value);
  // Intl drops the milliseconds; zone offsets are whole seconds, so they carry over unchanged.
  const ms = ((at % 1000) + 1000) % 1000;
  return {
    year: n.year as number,
    month: n.month as number,
    day: n.day as number,
    msOfDay: (((n.hour as number) * 60 + (n.minute as number)) * 60 + (n.second as number)) * 1000 + ms,
  };
}

/** The zone's offset from UTC at an instant, in ms (local = instant + offset). */
function offsetAt(fmt: Intl.DateTimeFormat, at: number): number {
  const t = localTime(fmt, at);
  return Date.UTC(t.year, t.month - 1, t.day) + t.msOfDay - at;
}

/**
 * The instant of a local wall-clock time, `wall` being that local time written
 * as if it were UTC. Repeated time: the earliest occurrence after `after`.
 * Skipped time: the first instant after the gap. Assumes at most one offset
 * change within two days of `wall`, true of every real zone.
 */
function instantOfWall(fmt: Intl.DateTimeFormat, wall: number, after: number): number {
  const before = offsetAt(fmt, wall - 2 * DAY);
  const later = offsetAt(fmt, wall + 2 * DAY);
  const candidates = [...new Set([wall - before, wall - later])]
    .filter((u) => u + offsetAt(fmt, u) === wall)
    .sort((a, b) => a - b);
  // When the time exists, one occurrence is after `after`: an instant inside
  // the window is before its end on the wall clock, and the clock turns back at
  // most once, which only adds a later occurrence.
  if (candidates.length > 0) return candidates.find((u) => u > after) ?? (candidates.at(-1) as number);
  // In the gap: reading the wall time with the old offset lands after the
  // change, with the new one before it. Bisect to the change itself.
  let lo = Math.min(wall - before, wall - later);
  let hi = Math.max(wall - before, wall - later);
  const offLo = offsetAt(fmt, lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(fmt, mid) === offLo) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * When the instant `at` (ms since the epoch) is inside the window, the instant
 * the window ends: the first instant after `at` whose local time is `end`,
 * with the DST rules described at the top of this file. Otherwise undefined.
 * Throws a {@link QuietHoursError} for a window {@link parseQuietHours} would refuse,
 * and a RangeError for an `at` that is not a finite number.
 */
export function quietUntil(window: QuietHours, at: number): number | undefined {
  if (!Number.isFinite(at)) throw new RangeError(`quietUntil: at must be a finite number of ms, got ${at}`);
  const startMs = minutesOf(window.start, 'start') * MINUTE;
  const endMs = minutesOf(window.end, 'end') * MINUTE;
  const fmt = formatterFor(checkZone(window.timezone));
  const now = localTime(fmt, at);
  const crossesMidnight = startMs > endMs;
  const inside = crossesMidnight
    ? now.msOfDay >= startMs || now.msOfDay < endMs
    : now.msOfDay >= startMs && now.msOfDay < endMs;
  if (!inside) return undefined;
  // Before midnight in a window that crosses it, the end is on the next local day.
  const dayShift = crossesMidnight && now.msOfDay >= startMs ? 1 : 0;
  const wallEnd = Date.UTC(now.year, now.month - 1, now.day + dayShift) + endMs;
  const end = instantOfWall(fmt, wallEnd, at);
  // Only when a spring-forward gap swallows both end and start (02:45–02:30 in
  // Europe/Berlin) is the first instant after the gap inside again: the window
  // then goes on to the next day's end.
  return quietUntil(window, end) ?? end;
}

/**
 * The earliest instant a message due at `at` may be sent: `at` itself when
 * there are no quiet hours or `at` is outside them (`deferred: false`), else
 * the end of the window (`deferred: true`).
 */
export function nextAllowedAt(window: QuietHours | undefined, at: number): { at: number; deferred: boolean } {
  const until = window ? quietUntil(window, at) : undefined;
  return until === undefined ? { at, deferred: false } : { at: until, deferred: true };
}
