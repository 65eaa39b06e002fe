import type { IngestInput, QuietHours } from '@singleshot/core';
import type { RouteConfig } from '@singleshot/config';

/**
 * When an operation of `route` may leave: the event's own `sendAt` (ingest
 * resolved `delaySeconds` into it), else the route's `delay` after the
 * message first arrived, else now (undefined).
 */
export function dueAt(route: Pick<RouteConfig, 'delay'>, input: IngestInput, firstArrivalAt: number): number | undefined {
  if (input.kind === 'event' && input.sendAt !== undefined) return input.sendAt;
  if (route.delay !== undefined) return firstArrivalAt + route.delay;
  return undefined;
}

/**
 * The quiet hours an operation of `route` for `recipient` keeps, resolved to
 * one zone: the recipient's own (from the event) when the route says so, else
 * the route's; none for a required route (it must go).
 */
export function quietHoursOf(route: Pick<RouteConfig, 'quietHours' | 'required'>, input: IngestInput, recipient: string): QuietHours | undefined {
  const quiet = route.quietHours;
  if (!quiet || route.required) return undefined;
  const own = input.kind === 'event' ? input.timezones?.[recipient] : undefined;
  const timezone = quiet.timezone === 'recipient' ? (own ?? quiet.fallbackTimezone) : quiet.timezone;
  return { start: quiet.start, end: quiet.end, timezone };
}
