import { retryDelayMs, type DeliverJobData, type OperationStatus } from '@singleshot/core';
import type { AttemptRecord, CommitOutcome } from '@singleshot/store';
import type { ScopedLogger } from '@singleshot/observability';
import type { DeliverDeps, DeliverOutcome } from './deliver';
import { ensureDeadRecord } from './dead-record';
import type { LeaseKeeper } from './lease-keeper';

export interface ClaimState {
  fence: string;
  attempts: number;
  previousStatus: OperationStatus;
  lastProvider: string;
  limitBypass: boolean;
  keeper: LeaseKeeper;
  log: ScopedLogger;
}

export interface CommitExtra {
  provider?: string;
  externalId?: string;
  error?: { code: string; message: string };
  reason?: string;
  releaseTo?: 'pending' | 'failed' | 'in_doubt';
  nextAttemptAt?: number;
}

type RecordInput = Omit<AttemptRecord, 'at' | 'attempt' | 'fence'>;

/**
 * One claimed attempt of one operation: the fence it holds, the attempt records
 * it collects, and the ways it can end. Every ending goes through the fenced
 * commit, which carries the records into the operation's history; a holder
 * whose fence was superseded ends `stale` and has written nothing.
 */
export class ClaimedAttempt {
  readonly history: AttemptRecord[] = [];

  constructor(
    readonly job: DeliverJobData,
    readonly deps: DeliverDeps,
    readonly claim: ClaimState,
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

  async commit(outcome: CommitOutcome, extra: CommitExtra = {}): Promise<'ok' | 'stale'> {
    const { job, deps } = this;
    const result = await deps.operations.commit({
      operationKey: job.operationKey,
      fence: this.claim.fence,
      outcome,
      messageKey: job.messageKey,
      recipient: job.recipient,
      channel: job.channel,
      history: this.history,
      ...extra,
    });
    if (result.kind === 'stale') {
      deps.metrics.staleCommits.inc({ queue: 'deliver' });
      this.log.warn({ outcome, currentFence: result.currentFence }, 'commit rejected: fence superseded by a later claim');
    }
    return result.kind;
  }

  async sent(provider: string, externalId: string, reconciled: boolean): Promise<DeliverOutcome> {
    if ((await this.commit('sent', { provider, externalId })) === 'stale') return { kind: 'stale' };
    const { metrics } = this.deps;
    metrics.deliveries.inc({ channel: this.job.channel, provider, result: 'sent' });
    if (!reconciled) metrics.endToEnd.observe({ channel: this.job.channel }, Math.max(0, this.now() - this.job.firstArrivalAt) / 1000);
    return { kind: 'sent', provider, externalId, reconciled };
  }

  async dead(reason: string, error: { code: string; message: string }, provider?: string): Promise<DeliverOutcome> {
    if ((await this.commit('dead', { reason, error, provider })) === 'stale') return { kind: 'stale' };
    this.deps.metrics.dead.inc({ channel: this.job.channel, reason });
    this.deps.metrics.deliveries.inc({ channel: this.job.channel, provider: provider ?? 'none', result: 'dead' });
    await ensureDeadRecord(this.job, this.deps, { reason, error });
    this.log.warn({ reason, error }, 'operation dead; recorded in the DLQ');
    return { kind: 'dead', reason };
  }

  /**
   * Commits `failed` or `in_doubt` with the time the next attempt is due (the
   * sweeper's index), or ends the operation dead when this was the last attempt.
   */
  async retryLater(
    outcome: 'failed' | 'in_doubt',
    reason: string,
    error: { code: string; message: string },
    provider: string,
    retryAfterMs?: number,
  ): Promise<DeliverOutcome> {
    const { policy } = this.deps;
    if (this.claim.attempts >= policy.attempts) {
      return this.dead(outcome === 'in_doubt' ? 'in_doubt_after_last_attempt' : 'attempts_exhausted', error, provider);
    }
    const delayMs = retryDelayMs({
      attempt: this.claim.attempts,
      scheduleMs: policy.backoffMs,
      capMs: policy.backoffCapMs,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(this.deps.random ? { random: this.deps.random } : {}),
    });
    const committed = await this.commit(outcome, { provider, error, nextAttemptAt: this.now() + delayMs });
    if (committed === 'stale') return { kind: 'stale' };
    return { kind: 'retry', delayMs, reason };
  }

  /** Hands the operation back without a provider call having been made in this claim. */
  async release(reason: string): Promise<DeliverOutcome> {
    const releaseTo = this.claim.previousStatus === 'in_doubt' ? 'in_doubt' : 'pending';
    if ((await this.commit('released', { releaseTo, nextAttemptAt: this.now() + 1000 })) === 'stale') return { kind: 'stale' };
    return { kind: 'retry', delayMs: 1000, reason };
  }
}
