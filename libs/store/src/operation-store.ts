import type { RedisClient } from './connection';
import type { AnyErrorCode, CommitOutcome, OperationStatus, RecipientStop, TerminalStatus, Verdict, WaitMark } from '@singleshot/core';
import type { KeyBuilder } from './keys';
import { ScriptBatch } from './script-batch';
import { OperationReader } from './operation-reader';
import type { AttemptRecord } from './operation-record';
import { decimal } from './script-options';
import type { ReplicaWaits } from './replica-barrier';
import { runScript } from './scripts';

export type { AttemptRecord, AttemptStep, OperationProbe, OperationRecord, OperationSummary } from './operation-record';

export interface CommitInput {
  operationKey: string;
  fence: string;
  outcome: CommitOutcome;
  messageKey: string;
  recipient: string;
  channel: string;
  provider?: string;
  externalId?: string;
  error?: { code: AnyErrorCode; message: string };
  /** Why an operation is dead or suppressed. */
  reason?: string;
  /** With `released`: the status to leave behind. */
  releaseTo?: 'pending' | 'failed' | 'in_doubt';
  /** With `released`: no provider was called in this claim, so its attempt does not count. */
  refundAttempt?: boolean;
  /** Provider attempts of this claim, appended to the operation's history. */
  history?: AttemptRecord | AttemptRecord[];
  /** When the next attempt is due (failed, in_doubt, released); the sweeper looks after that. Default now. */
  nextAttemptAt?: number;
  /** With `released`: why it waits until `nextAttemptAt` (every provider's breaker opened after the claim), marked as a wait. */
  waitReason?: WaitMark;
}

/** Why an operation may not go now although nothing ended it (the claim's `hold`): why, until when, and for a document what and which key it waits for. */
export interface WaitInput {
  reason: WaitMark;
  untilMs: number;
  waitingFor?: string;
  waitingKey?: string;
}

/**
 * The per-recipient limit an operation is over, read before its claim
 * (`RateLimiter.admit`: the windows live in other slots than the operation):
 * the scope that stopped it, how full its window is, and the note kept as the
 * ending's error. The claim answers it (docs/protocol.md, invariant 3).
 */
export interface ClaimLimit {
  /** `global`, or `route:<name>`. */
  scope: string;
  count: number;
  max: number;
  /** What the suppression says: the scope, the count of the max per window, when a slot frees. */
  note: string;
}

export type CommitResult = { kind: 'ok'; journalId: string } | { kind: 'stale'; currentFence: string };

export interface OperationStoreOptions {
  retentionMs: number;
  now?: () => number;
  /** On a Redis Cluster with replica waits: a claim that goes, and a lease extension, return only once on a replica. */
  replicas?: ReplicaWaits;
}

/**
 * Operation state, locks and fences: claim before send, fenced commit, lease
 * extension. Every check-and-set is one Lua script (docs/protocol.md
 * invariants 3, 4 and 10); the typed reads come from `OperationReader`.
 */
export class OperationStore extends OperationReader {
  private readonly now: () => number;
  /** Claims, and commits, asked for together go to Redis in one script call each (script-batch.ts). */
  private readonly claims: ScriptBatch<'claim'>;
  private readonly commits: ScriptBatch<'commit'>;

  constructor(
    redis: RedisClient,
    keys: KeyBuilder,
    private readonly options: OperationStoreOptions,
  ) {
    super(redis, keys);
    this.now = options.now ?? Date.now;
    this.claims = new ScriptBatch(redis, 'claim');
    this.commits = new ScriptBatch(redis, 'commit');
  }

  async claim(input: {
    operationKey: string;
    messageKey: string;
    recipient: string;
    channel: string;
    owner: string;
    leaseMs: number;
    /** The deliver job, kept at the first claim so the sweeper can re-enqueue a lost job. */
    job?: object;
    /** The route's category, for opt-outs by category. */
    category?: string;
    /** The route must go: opt-outs do not hold it back (suppressions do). */
    required?: boolean;
    /**
     * How long after an earlier holder's lease ran out a provider call it
     * started may still reach the provider: the longest call deadline the lease
     * allows. An operation left `sending` is not claimed again before its
     * holder's lease plus this (`conflict`). A sender passes it; 0 (the
     * default) suits a claim that never calls a provider.
     */
    settleMs?: number;
    /**
     * Why it may not go now although nothing ended it, worked out before the
     * claim (its quiet hours, a document not stored yet, the breakers): the
     * claim answers `wait` and marks the wait in place of the lock, unless the
     * operation has ended (that answer comes first) or another holder has it.
     */
    hold?: WaitInput;
    /**
     * The recipient is over a per-recipient limit (read before the claim):
     * the operation's first claim (never claimed, or released before a call)
     * ends it `suppressed` with reason `rate_limit` before taking the lock,
     * after every other ending and a hold, unless a replay released it from
     * such a suppression (`limitBypass`: it goes). Later claims ignore it.
     */
    limit?: ClaimLimit;
  }): Promise<Verdict> {
    const now = this.now();
    const k = this.keys;
    const { replicas } = this.options;
    // Before the claim: a failover that moves its slot before the replica wait fails the wait.
    const owners = replicas?.owners([k.op(input.operationKey)]);
    const raw = (await this.claims.run(k.layoutOf(input.operationKey), {
      keys: [
        k.op(input.operationKey),
        k.lock(input.operationKey),
        k.journalOf(input.operationKey),
        k.activeIndexOf(input.operationKey),
        k.opData(input.operationKey),
        k.scheduledIndexOf(input.operationKey),
        k.suppressionCopyOf(input.operationKey, input.recipient),
        k.suppressedIndexOf(input.operationKey),
        k.waitingIndexOf(input.operationKey),
        k.history(input.operationKey),
        k.layoutOf(input.operationKey),
      ],
      options: {
        leaseMs: decimal(input.leaseMs),
        now: decimal(now),
        leaseUntil: decimal(now + input.leaseMs),
        owner: input.owner,
        operationKey: input.operationKey,
        messageKey: input.messageKey,
        recipient: input.recipient,
        channel: input.channel,
        retentionMs: decimal(this.options.retentionMs),
        journalMinId: decimal(now - this.options.retentionMs),
        category: input.category ?? '',
        required: input.required ?? false,
        settleMs: decimal(input.settleMs ?? 0),
        ...(input.hold
          ? {
              waitReason: input.hold.reason,
              waitUntil: decimal(input.hold.untilMs),
              ...(input.hold.waitingFor !== undefined ? { waitingFor: input.hold.waitingFor, waitingKey: input.hold.waitingKey ?? '' } : {}),
            }
          : {}),
        ...(input.limit ? { limitNote: input.limit.note } : {}),
      },
      documents: input.job ? [JSON.stringify(input.job)] : [],
    })) as [string, number | string, string, number | string, string, string, string, string, string];
    const verdict = verdictOf(raw);
    // A claim that goes is on a replica before it is handed out: a failover that
    // lost it after a send would let the next claim see a fresh operation and
    // send it again, while a replicated claim leaves `sending`, which the next
    // claim reconciles first (docs/protocol.md, "Replica waits on a Redis Cluster").
    if (verdict.kind === 'go' && replicas && owners !== undefined) await replicas.after([k.op(input.operationKey)], owners);
    return verdict;
  }

  async commit(input: CommitInput): Promise<CommitResult> {
    const now = this.now();
    const k = this.keys;
    const history = input.history === undefined ? [] : Array.isArray(input.history) ? input.history : [input.history];
    const [kind, value] = (await this.commits.run(k.layoutOf(input.operationKey), {
      keys: [
        k.op(input.operationKey),
        k.lock(input.operationKey),
        k.journalOf(input.operationKey),
        k.history(input.operationKey),
        k.activeIndexOf(input.operationKey),
        k.suppressedIndexOf(input.operationKey),
        k.opData(input.operationKey),
        k.layoutOf(input.operationKey),
      ],
      options: {
        fence: input.fence,
        outcome: input.outcome,
        now: decimal(now),
        retentionMs: decimal(this.options.retentionMs),
        journalMinId: decimal(now - this.options.retentionMs),
        operationKey: input.operationKey,
        messageKey: input.messageKey,
        recipient: input.recipient,
        channel: input.channel,
        // Empty means none: left out, Lua sees nil.
        provider: input.provider || undefined,
        externalId: input.externalId || undefined,
        errorCode: input.error?.code || undefined,
        errorMessage: input.error?.code ? input.error.message.slice(0, 2000) : undefined,
        reason: input.reason || undefined,
        releaseTo: input.releaseTo,
        refundAttempt: input.refundAttempt || undefined,
        nextAttemptAt: input.nextAttemptAt === undefined ? undefined : decimal(input.nextAttemptAt),
        waitReason: input.waitReason,
      },
      documents: history.map((entry) => JSON.stringify(entry)),
    })) as [string, string];
    if (kind === 'ok') return { kind, journalId: value };
    return { kind: 'stale', currentFence: value };
  }

  /**
   * Creates an operation that is due later (op-schedule.lua): `scheduled`
   * until `dueAt`, its job stored for the sweeper, which looks at it
   * `sweepGraceMs` after it is due if nobody claimed it. False when the
   * operation existed already (a redelivered decision, a cancel first).
   */
  async schedule(job: { operationKey: string; messageKey: string; recipient: string; channel: string }, dueAt: number, reason: 'send_at' | 'delay', sweepGraceMs: number): Promise<boolean> {
    const now = this.now();
    const k = this.keys;
    const done = await runScript(
      this.redis,
      'op-schedule',
      [k.op(job.operationKey), k.opData(job.operationKey), k.journalOf(job.operationKey), k.activeIndexOf(job.operationKey), k.scheduledIndexOf(job.operationKey), k.layoutOf(job.operationKey)],
      {
        now: decimal(now),
        dueAt: decimal(dueAt),
        sweepAt: decimal(dueAt + sweepGraceMs),
        reason,
        operationKey: job.operationKey,
        messageKey: job.messageKey,
        recipient: job.recipient,
        channel: job.channel,
        // Kept for the retention period past its time, not past its creation.
        retentionMs: decimal(this.options.retentionMs + Math.max(0, dueAt - now)),
        journalMinId: decimal(now - this.options.retentionMs),
      },
      [JSON.stringify(job)],
    );
    return Number(done) === 1;
  }

  /**
   * Extends the lease when the fence still holds. False: the lease is lost,
   * stop. With replica waits, an extension counts only once it is as durable
   * as the claim: one answered by a master that is then failed over is lost
   * with it, and a holder that counted it would start a call a later claim
   * cannot see; the wait's failure rejects, and the holder keeps the lease it had.
   */
  async extend(operationKey: string, fence: string, leaseMs: number): Promise<boolean> {
    const { replicas } = this.options;
    const owners = replicas?.owners([this.keys.op(operationKey)]);
    const result = await runScript(
      this.redis,
      'extend-lock',
      [this.keys.lock(operationKey), this.keys.op(operationKey)],
      { fence, leaseMs: decimal(leaseMs), leaseUntil: decimal(this.now() + leaseMs) },
    );
    const extended = Number(result) === 1;
    if (extended && replicas && owners !== undefined) await replicas.after([this.keys.op(operationKey)], owners);
    return extended;
  }
}

/** The claim script's answer as the one verdict (claim.lua's output list). */
function verdictOf(raw: [string, number | string, string, number | string, string, string, string, string, string]): Verdict {
  const [kind, n, status, attempts, provider, externalId, bypass, cancelRequested, stopReason] = raw;
  switch (kind) {
    case 'claimed':
      return {
        kind: 'go',
        fence: String(n),
        previousStatus: status as OperationStatus,
        attempts: Number(attempts),
        lastProvider: provider,
        limitBypass: bypass === '1',
        cancelRequested: cancelRequested === '1',
        ...(stopReason === 'recipient_suppressed' || stopReason === 'opted_out' ? { stopReason } : {}),
      };
    case 'suppressed':
      return { kind: 'ended', status: 'suppressed', endedNow: true, reason: status as RecipientStop | 'rate_limit' };
    case 'early':
      return { kind: 'wait', reason: 'scheduled', untilMs: Number(n) };
    case 'wait':
      return { kind: 'wait', reason: status as WaitMark, untilMs: Number(n), began: stopReason === '1' };
    case 'duplicate':
      return { kind: 'ended', status: 'sent', endedNow: false, provider, externalId };
    case 'terminal':
      // Only a cancel asked for while nothing was in flight ends here (claim.lua); every other terminal status was there before.
      return n === 'cancel_requested' ? { kind: 'ended', status: 'cancelled', endedNow: true, reason: 'cancel_requested' } : { kind: 'ended', status: status as TerminalStatus, endedNow: false };
    case 'conflict':
      return { kind, retryInMs: Math.max(1, Number(n)) };
    default:
      throw new Error(`claim script returned unknown result ${kind}`);
  }
}
