import type { FeedbackEvent } from '@singleshot/core';

/** What one feedback post holds: the events to record, and the provider types it carried that are not recorded. */
export interface ParsedFeedback {
  events: FeedbackEvent[];
  ignored: string[];
}

const OPERATION_KEY = /^[0-9a-f]{64}$/;

/** The value when it is an operation key (64 lower-case hex digits), else undefined: anything else is not ours. */
export function operationKeyOf(value: unknown): string | undefined {
  return typeof value === 'string' && OPERATION_KEY.test(value) ? value : undefined;
}

/** An operation key from a Message-ID singleshot's SMTP provider wrote (`<operationKey@domain>`). */
export function operationKeyOfMessageId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^<?([0-9a-f]{64})@/.exec(value.trim());
  return m ? m[1] : undefined;
}

/** A provider's free text (diagnostic, reason), bounded so one event cannot fill the record. */
export function detailOf(...values: unknown[]): string | undefined {
  const text = values.filter((x) => typeof x === 'string' && x !== '' || typeof x === 'number').join(' ');
  return text ? text.slice(0, 200) : undefined;
}

/** Milliseconds of an ISO date, or of seconds since the epoch; undefined when neither. */
export function timeOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value * 1000);
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : undefined;
  }
  return undefined;
}
