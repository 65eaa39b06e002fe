import type { OperationStatus, WaitReason } from './types';

/** The statuses an operation never leaves (docs/protocol.md, the state diagram). */
export type TerminalStatus = Extract<OperationStatus, 'sent' | 'dead' | 'suppressed' | 'cancelled'>;

/**
 * What a fenced commit records as the end of a claimed attempt: the status it
 * leaves behind, or `released` (handed back before any provider call, to the
 * status the commit names). Derived from the statuses: a commit can leave no
 * other.
 */
export type CommitOutcome = Exclude<OperationStatus, 'pending' | 'scheduled' | 'sending'> | 'released';

/** Why the recipient holds an operation back at the claim. */
export type RecipientStop = 'recipient_suppressed' | 'opted_out';

/**
 * The claim's answer to "may this operation go now?" (docs/protocol.md,
 * invariant 3), the one verdict there is; the deliver handler obeys it:
 *
 * - `go`: the lock and a new fence are taken; `previousStatus` `sending` or
 *   `in_doubt` (or `cancelRequested`, or a `stopReason`) mean "reconcile
 *   before sending", and with the last two never send anew.
 * - `wait`: not claimed, no attempt used; look again at `untilMs`. Either
 *   its send-at time has not come (`scheduled`), or the caller passed in why
 *   it may not go now although nothing ended it (quiet hours, a document not
 *   stored yet, the breakers) and the claim marked the wait in place of the lock.
 * - `conflict`: another holder has the lock, or an earlier holder's call may
 *   still land; try again after `retryInMs`.
 * - `ended`: the operation is terminal. `endedNow` says this claim ended it
 *   (the recipient suppressed or opted out, a cancel asked for while nothing
 *   was in flight, or, on its first claim, a per-recipient limit the caller
 *   read before the claim and passed in: `suppressed` with reason
 *   `rate_limit`); otherwise an earlier step did, and `sent` is a duplicate.
 */
export type Verdict =
  | {
      kind: 'go';
      fence: string;
      previousStatus: OperationStatus;
      attempts: number;
      lastProvider: string;
      /** A replay released this operation from a rate-limit suppression: the claim let it go over the limit; it takes its slot once. */
      limitBypass: boolean;
      /** A cancel came while an earlier attempt was in flight: reconcile, never send. */
      cancelRequested: boolean;
      /** The recipient became suppressed (or opted out) after an earlier attempt that may have got through: reconcile, never send. */
      stopReason?: RecipientStop;
    }
  /** `began`: this claim marked a new wait (another reason, or another thing waited for). */
  | { kind: 'wait'; reason: WaitReason; untilMs: number; began?: boolean }
  | { kind: 'conflict'; retryInMs: number }
  | { kind: 'ended'; status: TerminalStatus; endedNow: boolean; reason?: string; provider?: string; externalId?: string };
