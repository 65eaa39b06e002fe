import { sha256Hex } from './hash';
import { quietUntil } from './quiet-hours';

/** A digest window as the config gives it: a duration in ms, or a daily local time in a zone. */
export type DigestWindow = number | { daily: string; timezone: string };

/** `fixed`: a window starts at its first member; `aligned`: calendar windows (epoch multiples of the duration). */
export type DigestMode = 'fixed' | 'aligned';

const MINUTE = 60_000;
const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

function plusMinute(hhmm: string): string {
  const m = HH_MM.exec(hhmm);
  if (!m) throw new TypeError(`digest daily time must be "HH:MM" (24 h), got ${JSON.stringify(hhmm)}`);
  const next = (Number(m[1]) * 60 + Number(m[2]) + 1) % 1440;
  return `${String(Math.floor(next / 60)).padStart(2, '0')}:${String(next % 60).padStart(2, '0')}`;
}

/**
 * The first instant after `at` whose local time in `timezone` is `hhmm`.
 * It reuses the quiet-hours rules (one place for daylight saving time): the
 * window "from one minute after `hhmm` to `hhmm`" covers every local time but
 * the minute starting at `hhmm`, and it ends exactly at the next `hhmm`.
 */
export function nextDailyAt(hhmm: string, timezone: string, at: number): number {
  const window = { start: plusMinute(hhmm), end: hhmm, timezone };
  const until = quietUntil(window, at) ?? quietUntil(window, at + MINUTE);
  if (until === undefined) throw new RangeError(`no local ${hhmm} in ${timezone} after ${at}`);
  return until;
}

/**
 * Where a digest that opens at `now` starts and when it closes. A fixed window
 * starts at `now`; an aligned one at the last multiple of its length since the
 * epoch; a daily one closes at the next local time and started a day before.
 * The close time is worked out once, when the digest opens, and stored with
 * it: a later config change never moves it.
 */
export function digestWindowAt(window: DigestWindow, mode: DigestMode, now: number): { start: number; closeAt: number } {
  if (typeof window === 'number') {
    if (!Number.isInteger(window) || window <= 0) throw new RangeError(`digest window must be a positive number of ms, got ${window}`);
    const start = mode === 'aligned' ? Math.floor(now / window) * window : now;
    return { start, closeAt: start + window };
  }
  const closeAt = nextDailyAt(window.daily, window.timezone, now);
  return { start: Math.min(now, closeAt - 86_400_000), closeAt };
}

/** The digest group of (route, recipient, rendered digest key): one open digest at a time, in one slot. */
export function digestGroupId(route: string, recipient: string, key: string): string {
  return sha256Hex(`digest\n${route}\n${recipient}\n${key}`);
}

/** The id of a group's `seq`th digest; the flush operation's message key. */
export function digestId(group: string, seq: number): string {
  return sha256Hex(`${group}:${seq}`);
}
