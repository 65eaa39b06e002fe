import type { JournalType, OperationStatus } from './types';

/**
 * An operation's life as data: which step moves it from which status to which,
 * and the journal entry that step writes. The Lua scripts of libs/store
 * implement exactly this table; libs/store/src/lifecycle-table.test.ts drives
 * every step against every status on a real Redis and fails on a row that
 * cannot be reached or a change the table does not list, and
 * docs/protocol.md's state diagram is generated from it (`stateDiagram`).
 */

/** Where an operation is before a step: one of its statuses, or `absent` (no record yet). */
export type LifecycleFrom = OperationStatus | 'absent';

/**
 * The steps that change an operation's status, each one script: `schedule`
 * (op-schedule), `claim`, `wait` (the claim given a hold: why it may not go
 * now although nothing ended it, so it marks the wait instead of taking the
 * lock), the commit of each outcome (`release_*`: handed back before a call,
 * to that status), `cancel` (cancel-op) and `replay`.
 */
export const LIFECYCLE_EVENTS = [
  'schedule',
  'wait',
  'claim',
  'commit_sent',
  'commit_in_doubt',
  'commit_failed',
  'commit_dead',
  'commit_suppressed',
  'commit_cancelled',
  'release_pending',
  'release_in_doubt',
  'release_failed',
  'cancel',
  'replay',
] as const;
export type LifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/**
 * A condition a row needs besides the status: the recipient is suppressed (or
 * opted out of the route's category); a cancel came while an attempt was in
 * flight and marked the operation; the holder of a `sending` operation is gone
 * and its lease and longest call deadline have passed; the claim was told the
 * recipient is over a per-recipient limit (its `limit`, read before the claim).
 */
export type LifecycleGuard = 'recipient_suppressed' | 'cancel_marked' | 'lease_over' | 'over_limit';

/** One row: `from` × `event` (× `when`) → `to`, and the journal entry written. */
export interface Transition {
  from: LifecycleFrom;
  event: LifecycleEvent;
  when?: LifecycleGuard;
  to: OperationStatus;
  journal?: JournalType;
  /** Why the row exists, for the diagram's reader. */
  note?: string;
}

const rows = (from: readonly LifecycleFrom[], rest: Omit<Transition, 'from'>): Transition[] => from.map((f) => ({ from: f, ...rest }));

const CLAIMABLE: readonly LifecycleFrom[] = ['absent', 'pending', 'scheduled', 'failed'];

/**
 * Every status change there is. A step from a status with no row here changes
 * nothing: a claim of a terminal operation, a commit with a stale fence, a
 * replay of one still in progress, a claim before its scheduled time.
 */
export const TRANSITIONS: readonly Transition[] = [
  { from: 'absent', event: 'schedule', to: 'scheduled', journal: 'scheduled', note: 'a send-at time or a route delay' },
  { from: 'absent', event: 'wait', to: 'pending', note: 'held back (quiet hours, a document, the breakers): marked waiting, no lock' },
  ...rows(CLAIMABLE, { event: 'wait', when: 'recipient_suppressed', to: 'suppressed', journal: 'suppressed', note: 'an ending comes before any wait' }),
  { from: 'sent', event: 'wait', to: 'sent', journal: 'duplicate' },
  ...rows(CLAIMABLE, { event: 'claim', to: 'sending', note: 'lock and fence taken; a scheduled one only once due' }),
  { from: 'in_doubt', event: 'claim', to: 'sending', note: 'reconcile before any send' },
  { from: 'sending', event: 'claim', when: 'lease_over', to: 'sending', note: "a crashed holder's: a new fence; reconcile before any send" },
  ...rows(CLAIMABLE, { event: 'claim', when: 'recipient_suppressed', to: 'suppressed', journal: 'suppressed', note: 'no lock taken' }),
  // Only a first claim is limited (a failed one was counted at its first), and
  // only one that would take the lock: an ending or a wait comes first.
  ...rows(['absent', 'pending', 'scheduled'], { event: 'claim', when: 'over_limit', to: 'suppressed', journal: 'suppressed', note: 'reason rate_limit; no lock taken' }),
  { from: 'sent', event: 'claim', to: 'sent', journal: 'duplicate' },
  { from: 'sending', event: 'commit_sent', to: 'sent', journal: 'sent' },
  { from: 'sending', event: 'commit_in_doubt', to: 'in_doubt', journal: 'in_doubt' },
  { from: 'sending', event: 'commit_failed', to: 'failed' },
  { from: 'sending', event: 'commit_failed', when: 'cancel_marked', to: 'cancelled', journal: 'cancelled', note: 'nothing got through: the cancel wins' },
  { from: 'sending', event: 'commit_dead', to: 'dead', journal: 'dead' },
  { from: 'sending', event: 'commit_suppressed', to: 'suppressed', journal: 'suppressed' },
  { from: 'sending', event: 'commit_cancelled', to: 'cancelled', journal: 'cancelled' },
  { from: 'sending', event: 'release_pending', to: 'pending', note: 'handed back before a call' },
  { from: 'sending', event: 'release_pending', when: 'cancel_marked', to: 'cancelled', journal: 'cancelled' },
  { from: 'sending', event: 'release_in_doubt', to: 'in_doubt' },
  { from: 'sending', event: 'release_failed', to: 'failed' },
  { from: 'sending', event: 'release_failed', when: 'cancel_marked', to: 'cancelled', journal: 'cancelled' },
  ...rows(['absent', 'pending', 'scheduled', 'failed'], { event: 'cancel', to: 'cancelled', journal: 'cancelled' }),
  ...rows(['dead', 'suppressed'], { event: 'replay', to: 'pending', journal: 'replayed', note: 'a fresh attempt budget' }),
];

/** The row for a step, or undefined when the step changes nothing from there. */
export function transitionOf(from: LifecycleFrom, event: LifecycleEvent, when?: LifecycleGuard): Transition | undefined {
  return TRANSITIONS.find((t) => t.from === from && t.event === event && t.when === when);
}

/**
 * The table as a Mermaid state diagram (docs/protocol.md, "Operation states"):
 * one arrow per status change, its label the step and its condition; rows that
 * leave the status as it is (a duplicate claim, a crashed holder's claim) are
 * left out of the picture.
 */
export function stateDiagram(table: readonly Transition[] = TRANSITIONS): string {
  const arrows = new Map<string, string[]>();
  for (const t of table) {
    if (t.from === t.to) continue;
    const from = t.from === 'absent' ? '[*]' : t.from;
    const label = t.when ? `${t.event} (${t.when.replace('_', ' ')})` : t.event;
    const key = `${from} --> ${t.to}`;
    const labels = arrows.get(key) ?? [];
    if (!labels.includes(label)) labels.push(label);
    arrows.set(key, labels);
  }
  const lines = [...arrows].map(([arrow, labels]) => `    ${arrow}: ${labels.join(', ')}`);
  return ['```mermaid', 'stateDiagram-v2', ...lines, '```'].join('\n');
}
