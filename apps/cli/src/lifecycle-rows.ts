import type { OperationRecord } from '@singleshot/store';
import { formatTime } from './format';

type Lifecycle = Pick<OperationRecord, 'status' | 'scheduledFor' | 'scheduleReason' | 'cancelRequested' | 'cancelReason' | 'cancelledBy' | 'waitingReason' | 'waitingUntil' | 'waitingFor' | 'waitingSince'>;

/**
 * An operation's status in one cell, with what it waits for: its due time
 * when scheduled, a cancel asked for while an attempt was in flight, its
 * waiting mark (a document since when; quiet hours or a breaker until when).
 * `messages show` and `ops show` list operations by it.
 */
export function statusText(op: Lifecycle): string {
  if (op.status === 'scheduled') return `scheduled for ${formatTime(op.scheduledFor)}`;
  if (op.cancelRequested !== undefined && op.status !== 'cancelled') return `${op.status}, cancel requested`;
  if (op.waitingFor) return `${op.status}, waiting for ${op.waitingFor} since ${formatTime(op.waitingSince)}`;
  if (op.waitingReason) return `${op.status}, ${op.waitingReason} until ${formatTime(op.waitingUntil)}`;
  return op.status;
}

/**
 * The table rows of `ops show` for schedules and cancels: empty cells when
 * the operation was neither scheduled nor cancelled (rows stay in place, as
 * the other rows of the table do).
 */
export function lifecycleRows(op: Lifecycle): string[][] {
  const who = op.cancelledBy !== undefined ? `by ${op.cancelledBy}${op.cancelReason ? `: ${op.cancelReason}` : ''}` : '';
  let cancelled = '';
  if (op.status === 'cancelled') cancelled = who || 'yes';
  else if (op.cancelRequested !== undefined) {
    // What an in-flight cancel guarantees: the attempt under way ends it, never a new one.
    cancelled = `requested at ${formatTime(op.cancelRequested)} ${who}, during an attempt: it ends sent (if that attempt got through) or cancelled, never sent anew`;
  }
  return [
    ['scheduled', op.scheduledFor !== undefined ? `for ${formatTime(op.scheduledFor)}${op.scheduleReason ? ` (${op.scheduleReason})` : ''}` : ''],
    ['cancelled', cancelled.replace(/\s+/g, ' ')],
  ];
}
