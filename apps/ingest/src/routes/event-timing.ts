import { normalizeRecipient } from '@singleshot/core';
import type { EventBody } from './event-body';

/** Why an event's timing was refused, with the code ingest answers (400). */
export interface TimingProblem {
  code: 'SEND_AT_BEYOND_HORIZON' | 'AMBIGUOUS_SEND_AT';
  message: string;
}

/**
 * When an event's notifications may leave, as ms since the epoch: `sendAt`,
 * or `delaySeconds` after `now`; undefined for now. A time in the past means
 * now; past the horizon is refused, so a typo in a year cannot park a
 * notification for decades.
 */
export function sendAtOf(event: Pick<EventBody, 'sendAt' | 'delaySeconds'>, now: number, maxHorizonMs: number): { sendAt?: number } | TimingProblem {
  if (event.sendAt !== undefined && event.delaySeconds !== undefined) {
    return { code: 'AMBIGUOUS_SEND_AT', message: 'give either sendAt or delaySeconds, not both' };
  }
  const at = event.sendAt !== undefined ? Date.parse(event.sendAt) : event.delaySeconds !== undefined ? now + event.delaySeconds * 1000 : undefined;
  if (at === undefined || at <= now) return {};
  if (at - now > maxHorizonMs) {
    return { code: 'SEND_AT_BEYOND_HORIZON', message: `the event asks to be sent more than ${Math.round(maxHorizonMs / 86_400_000)} days ahead (scheduling.maxHorizonDays)` };
  }
  return { sendAt: at };
}

/** The event's recipients as addresses, and the own time zones some of them gave (by normalized address). */
export function recipientsOf(recipients: EventBody['recipients']): { recipients?: string[]; timezones?: Record<string, string> } {
  if (!recipients) return {};
  const list: string[] = [];
  const zones: Record<string, string> = {};
  for (const r of recipients) {
    if (typeof r === 'string') {
      list.push(r);
      continue;
    }
    list.push(r.address);
    if (r.timezone) zones[normalizeRecipient(r.address)] = r.timezone;
  }
  return Object.keys(zones).length > 0 ? { recipients: list, timezones: zones } : { recipients: list };
}
