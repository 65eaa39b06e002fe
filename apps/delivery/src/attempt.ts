import type { DeliverJobData } from '@singleshot/core';
import type { AttemptRecord } from '@singleshot/store';
import type { ScopedLogger } from '@singleshot/observability';
import type { ListUnsubscribe } from '@singleshot/providers';
import type { ReservedTrial } from './breaker-gate';
import type { ClaimState, DeliverDeps } from './deliver-types';
import type { LeaseKeeper } from './lease-keeper';
import type { DocumentGate, PreparedDocuments } from './document-gate';

type RecordInput = Omit<AttemptRecord, 'at' | 'attempt' | 'fence'>;

/**
 * One claimed attempt of one operation: the fence it holds and the attempt
 * records it collects. How it ends is decided by the deciding modules and
 * carried out by `finish` (ending.ts), whose fenced commit takes the records
 * into the operation's history.
 */
export class ClaimedAttempt {
  readonly history: AttemptRecord[] = [];
  /** What the operation's documents allowed before the claim (none: it needs none). */
  gate?: DocumentGate;
  /** The documents this send carries (attachments and links), once loaded. */
  content?: PreparedDocuments;
  /** The one-click unsubscribe of this email (a route with a category), signed before the claim. */
  listUnsubscribe?: ListUnsubscribe;

  constructor(
    readonly job: DeliverJobData,
    readonly deps: DeliverDeps,
    readonly claim: ClaimState,
    /** The half-open trial taken before the claim, for the provider chain to use. */
    readonly trial?: ReservedTrial,
  ) {}

  now(): number {
    return (this.deps.now ?? Date.now)();
  }

  get log(): ScopedLogger {
    return this.claim.log;
  }

  get keeper(): LeaseKeeper {
    return this.claim.keeper;
  }

  record(entry: RecordInput): void {
    this.history.push({ at: this.now(), attempt: this.claim.attempts, fence: this.claim.fence, ...entry });
  }
}
